package openai

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines they started outlive
// them: servers, clients and streams must all be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
