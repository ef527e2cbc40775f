package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/result"
)

// Problem 1: a cancelled run exits 3 "interrupted" whenever the signal
// lands (starting the server, between points, inside a window), never 1,
// and never blames the server. The delays only vary where the signal
// lands; the assertions hold for any of them.
func TestInterruptedRunNeverFails(t *testing.T) {
	cases := []struct {
		sig   syscall.Signal
		after time.Duration
	}{
		{syscall.SIGINT, 0},
		{syscall.SIGINT, 300 * time.Millisecond},
		{syscall.SIGINT, time.Second},
		{syscall.SIGTERM, 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.sig.String()+"+"+tc.after.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			var stdout bytes.Buffer
			var stderr lockedBuffer
			cmd := exec.Command(perfscenBin(t), "run", "-q", "--out", out, "testdata/contract/long.yaml")
			// The goroutine count is printed once the command runs, after
			// main installed its signal handling: the signal must land
			// there, not on a process still loading.
			cmd.Env = append(os.Environ(), "PERFSCEN_DEBUG_GOROUTINES=1")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitFor(t, &stderr, "goroutines at start")
			time.Sleep(tc.after)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 30s after %v\nstderr:\n%s", tc.sig, stderr.String())
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != 3 {
				t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			all := stdout.String() + stderr.String()
			for _, bad := range []string{"never answered", "FAIL"} {
				if strings.Contains(all, bad) {
					t.Errorf("an interrupted run says %q:\n%s", bad, all)
				}
			}
			if r, err := result.ReadFile(out); err == nil {
				if r.Status != result.StatusInterrupted {
					t.Errorf("result status %q, want interrupted", r.Status)
				}
				if !strings.Contains(stdout.String(), "INTERRUPTED") {
					t.Errorf("no INTERRUPTED summary:\n%s", stdout.String())
				}
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer written by the child's copier and read
// by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits until the child has written s.
func waitFor(t *testing.T, b *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the child never wrote %q:\n%s", s, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
