package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/result"
)

// remoteScenario measures model simple on an external server with short
// windows; extra is appended verbatim (thresholds, options).
func remoteScenario(t *testing.T, dir, url, proto, extra string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, "s.yaml"), fmt.Sprintf(`version: 1
name: fault
server:
  url: %s
  protocol: %s
  timeout: 1s
models:
  - name: simple
sweep:
  concurrency: [1, 2, 4]
measurement:
  window: 200ms
  max_trials: 8
  stability: 50%%
%s`, url, proto, extra))
}

// Nothing listens: the readiness wait gives up at the connect timeout with
// exit 3 and the dial error, and no result file claims a measurement.
func TestFaultServerUnreachableAtStart(t *testing.T) {
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			sc := remoteScenario(t, dir, closedPort(t), proto, "")
			out := filepath.Join(dir, "r.json")
			r := runFault(t, context.Background(), "run", sc, "-q", "--out", out, "--connect-timeout", "700ms")
			if r.code != exitcode.Environment {
				t.Fatalf("want exit 3, got %s", r)
			}
			if r.elapsed > 700*time.Millisecond+5*time.Second {
				t.Errorf("gave up after %s, connect timeout 700ms", r.elapsed)
			}
			// Said once: in the summary line of the report.
			for _, want := range []string{"not ready within 700ms", "connection refused"} {
				if n := strings.Count(r.stdout+r.stderr, want); n != 1 {
					t.Errorf("%q said %d times, want once:\n%s", want, n, r)
				}
			}
		})
	}
}

// The server dies while a point is being measured: what was measured is
// written with status partial, the run says the server became unreachable,
// and the exit code is 3.
func TestFaultServerKilledMidWindow(t *testing.T) {
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			srv := startServer(t, refserver.Options{ModelParams: map[string]map[string]string{"simple": {refserver.ParamAddedLatency: "1ms"}}})
			url := srv.HTTPAddr()
			if proto == "grpc" {
				url = srv.GRPCAddr()
			}
			dir := t.TempDir()
			sc := remoteScenario(t, dir, url, proto, "")
			out := filepath.Join(dir, "r.json")
			done := make(chan cliRun, 1)
			go func() { done <- runFault(t, context.Background(), "run", sc, "-q", "--out", out, "--no-baseline") }()
			waitSuccesses(t, srv, "simple", 30)
			killed := time.Now()
			srv.Close()
			r := <-done
			if r.code != exitcode.Environment {
				t.Fatalf("want exit 3, got %s", r)
			}
			if d := time.Since(killed); d > 10*time.Second {
				t.Errorf("run went on for %s after the server died", d)
			}
			res := readResult(t, out)
			if res.Status != result.StatusPartial {
				t.Errorf("run status %q, want partial", res.Status)
			}
			if len(res.Points) == 0 || len(res.Errors) == 0 {
				t.Fatalf("want the measured points and a run-level error, got %d points, errors %q", len(res.Points), res.Errors)
			}
			if !strings.Contains(r.stdout+r.stderr, "unreachable") {
				t.Errorf("output does not say the server became unreachable:\n%s", r)
			}
		})
	}
}
