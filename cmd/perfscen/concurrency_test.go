package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
)

// An interrupt stops a run within a second at any concurrency: the
// workers still starting, those waiting for a connection and those
// waiting for replies of a server that takes its time all end, and the
// run exits 3 naming the interrupt. On the fake clock, so what is timed
// is the run's own waits (drain, timeouts, retries), not this machine's
// speed: at most 250 ms of them, the interrupt's 100 ms drain (a stop at
// the end of a point drains for 500 ms) and the connections closing, so
// that the second is left to a busy machine's CPU.
func TestInterruptStopsWithinASecond(t *testing.T) {
	for _, c := range []struct {
		name string
		conc int
		at   time.Duration // when the interrupt comes
	}{
		{"as the load starts", maxTestConcurrency, time.Millisecond},
		{"with every request in flight", maxTestConcurrency, 3 * time.Second},
		{"at concurrency 1", 1, 3 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				sc := writeScenario(t, dir, "slow.yaml", strings.ReplaceAll(slowScenario, "CONC", strconv.Itoa(c.conc)))
				ctx, cancel := context.WithCancel(t.Context())
				var mem memnet.Network
				var out, errb bytes.Buffer
				e := &env{ctx: ctx, stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv,
					net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}}
				done := make(chan int, 1)
				go func() {
					done <- runEnv(e, []string{"run", "-q", "--progress", "never", "--out-dir", filepath.Join(dir, "out"), sc})
				}()
				time.Sleep(c.at)
				cancel()
				at := time.Now()
				code := <-done
				if took := time.Since(at); took > 250*time.Millisecond {
					t.Errorf("the run ended %s after the interrupt, want at most 250ms (the interrupt drain, 100ms, and the connections closing)", took)
				}
				if code != exitcode.Environment || !strings.Contains(out.String(), "INTERRUPTED") {
					t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
				}
			})
		})
	}
}

// maxTestConcurrency is a high concurrency a test can afford.
const maxTestConcurrency = 2000

// slowScenario's server answers after 20 s, within its 60 s timeout.
const slowScenario = `version: 1
name: slow
server:
  embedded: true
  timeout: 60s
  embedded_models:
    simple: {added_latency: 20s}
models:
  - name: simple
load:
  concurrency: CONC
measurement:
  window: 1s
  max_trials: 3
`

// A concurrency no run can hold is refused by validate and by run alike,
// before any load, naming the limit and the memory it would need.
func TestConcurrencyLimit(t *testing.T) {
	const want = "scenario/testdata/invalid/concurrency.yaml:9:16: load.concurrency: 1000000 requests outstanding: at most 65536 (each is a worker of its own, about 64 KiB with its connection: 1000000 would need about 61 GiB)"
	if code, stdout, stderr := runCLI(t, "validate", "@scenario/testdata/invalid/concurrency.yaml"); code != exitcode.Invalid || !strings.Contains(stderr, want) {
		t.Errorf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	out := t.TempDir()
	if code, stdout, stderr := runCLI(t, "run", "-q", "--out-dir", out, "@scenario/testdata/invalid/concurrency.yaml"); code != exitcode.Invalid || !strings.Contains(stderr, want) {
		t.Errorf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	if left, _ := os.ReadDir(out); len(left) > 0 {
		t.Errorf("written: %v", left)
	}
}

// A concurrency the scenario allows but this machine cannot hold (here,
// more connections than the process may open) is refused by run before
// the first worker starts: exit 2, naming the limit.
func TestRunRefusesWhatTheMachineCannotHold(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "wide.yaml", strings.ReplaceAll(slowScenario, "CONC", "400"))
	cmd := exec.Command("bash", "-c", `ulimit -n 256 && exec "$0" run -q --out-dir "$1" "$2"`, perfscenBinary(t), filepath.Join(dir, "out"), sc)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitcode.Invalid ||
		!strings.Contains(string(out), "the load needs up to 800 connections at once (a connection a worker, and the embedded server's end of each in this process), and the open-file limit is 256 (ulimit -n)") {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a result was written")
	}
}
