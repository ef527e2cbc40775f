package e2e

import (
	"bytes"
	"os"
	"os/exec"
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

func perfscenBin(t *testing.T) string { return testbin.Perfscen(t) }

// perfscen runs the binary and returns its exit code and output.
func perfscen(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(perfscenBin(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}
