package tfserving

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines they started outlive
// them: flavours, clients and scrapes must all be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
