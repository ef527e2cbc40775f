package torchserve

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines they started outlive
// them: front-ends, clients and connections must all be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
