package e2e

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/perfscen/perfscen/internal/testbin"
)

func TestMain(m *testing.M) {
	// Goroutines the tests started (embedded servers, clients, waits on
	// child processes) must be gone when they end.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testbin.Cleanup()
		os.Exit(code)
	}))
}
