package baseline

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines they started outlive
// them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
