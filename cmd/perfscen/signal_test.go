package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/perfscen/perfscen/internal/testbin"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/result"
)

// The signal tests need a real process: main's signal handling, exit
// status and shared-memory cleanup at exit are what they check.
func TestMain(m *testing.M) {
	// Goroutines the tests started (embedded servers, clients, waits on
	// child processes) must be gone when they end.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testbin.Cleanup()
		os.Exit(code)
	}))
}

func perfscenBinary(t *testing.T) string { return testbin.Perfscen(t) }

// shmEntries lists the shared-memory files created by process pid.
func shmEntries(t *testing.T, pid int) []string {
	t.Helper()
	m, err := filepath.Glob(fmt.Sprintf("/dev/shm/perfscen_%d_*", pid))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func requireShm(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("POSIX shared memory under /dev/shm is Linux-only")
	}
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
}

// child is a perfscen process started by a test.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan error
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(perfscenBinary(t), args...), done: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait returns the exit code, failing the test after limit.
func (c *child) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err // let Cleanup see it has exited
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(limit):
		t.Fatalf("perfscen still running after %s\nstdout:\n%s\nstderr:\n%s", limit, c.stdout.String(), c.stderr.String())
		return -1
	}
}

// untilShm waits until the child has mapped its regions, i.e. is measuring.
func (c *child) untilShm(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(shmEntries(t, c.cmd.Process.Pid)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no shared-memory region appeared\nstderr:\n%s", c.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const shmScenario = `version: 1
name: shm-signal
server:
  %s
  timeout: 2s
models:
  - name: simple
load:
  shared_memory: system
%s`

const shmLongLoad = `sweep:
  concurrency: [1, 2, 4, 8]
measurement:
  window: 300ms
  max_trials: 10
  trials: 3
`

// Ctrl-C and SIGTERM stop a shared-memory run at once: exit 3 within the
// drain, the measured part written with status interrupted, and every
// region the process created unlinked.
func TestSignalInterruptsRunCleanly(t *testing.T) {
	requireShm(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			sc := writeFile(t, filepath.Join(dir, "s.yaml"), fmt.Sprintf(shmScenario, "embedded: true", shmLongLoad))
			out := filepath.Join(dir, "r.json")
			c := startChild(t, "run", sc, "-q", "--out", out)
			c.untilShm(t)
			time.Sleep(300 * time.Millisecond)
			sent := time.Now()
			if err := c.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := c.wait(t, 10*time.Second)
			took := time.Since(sent)
			if code != exitcode.Environment {
				t.Fatalf("exit %d, want 3\nstderr:\n%s", code, c.stderr.String())
			}
			// Drain (500 ms) plus process teardown; generous for a loaded 2-core box.
			if took > 3*time.Second {
				t.Errorf("exited %s after %v", took, sig)
			}
			t.Logf("exited %s after %v", took.Round(time.Millisecond), sig)
			if res := readResult(t, out); res.Status != result.StatusInterrupted {
				t.Errorf("result status %q, want interrupted", res.Status)
			}
			if left := shmEntries(t, c.cmd.Process.Pid); len(left) > 0 {
				t.Errorf("shared memory left behind: %v", left)
			}
		})
	}
}

// A run that ends normally, and one that ends because its server died,
// unlink their regions too.
func TestSharedMemoryReleasedOnExit(t *testing.T) {
	requireShm(t)
	t.Run("pass", func(t *testing.T) {
		dir := t.TempDir()
		sc := writeFile(t, filepath.Join(dir, "s.yaml"), fmt.Sprintf(shmScenario, "embedded: true",
			"  mode: iterations\n  iterations: 50\n"))
		c := startChild(t, "run", sc, "-q", "--out-dir", dir)
		if code := c.wait(t, 30*time.Second); code != exitcode.OK {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, c.stdout.String(), c.stderr.String())
		}
		if left := shmEntries(t, c.cmd.Process.Pid); len(left) > 0 {
			t.Errorf("shared memory left behind: %v", left)
		}
	})
	t.Run("server died", func(t *testing.T) {
		srv, err := refserver.New(refserver.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "-", Models: []string{"simple"}, ShutdownGrace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		dir := t.TempDir()
		sc := writeFile(t, filepath.Join(dir, "s.yaml"), fmt.Sprintf(shmScenario, "url: "+srv.HTTPAddr(), shmLongLoad))
		out := filepath.Join(dir, "r.json")
		c := startChild(t, "run", sc, "-q", "--out", out)
		c.untilShm(t)
		waitSuccesses(t, srv, "simple", 20)
		srv.Close()
		if code := c.wait(t, 20*time.Second); code != exitcode.Environment {
			t.Fatalf("exit %d, want 3\nstderr:\n%s", code, c.stderr.String())
		}
		if res := readResult(t, out); res.Status != result.StatusPartial {
			t.Errorf("result status %q, want partial", res.Status)
		}
		if left := shmEntries(t, c.cmd.Process.Pid); len(left) > 0 {
			t.Errorf("shared memory left behind: %v", left)
		}
		if !strings.Contains(c.stdout.String()+c.stderr.String(), "unreachable") {
			t.Errorf("output does not say why:\n%s%s", c.stdout.String(), c.stderr.String())
		}
	})
}
