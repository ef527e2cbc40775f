package conformance

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/perfscen/perfscen/internal/testbin"
)

// TestMain fails the package's tests when goroutines they started outlive
// them: servers, clients and streams must all be closed. The perfscen
// binary the real-server tests build is removed at the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testbin.Cleanup()
		os.Exit(code)
	}))
}
