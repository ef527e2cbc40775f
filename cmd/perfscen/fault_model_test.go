package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/result"
)

// embeddedFaultScenario runs model simple on the embedded server with the
// given fault parameters (YAML lines under simple:) and extra top-level
// YAML appended.
func embeddedFaultScenario(t *testing.T, dir, proto, timeout, params, extra string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, "s.yaml"), fmt.Sprintf(`version: 1
name: fault
server:
  embedded: true
  protocol: %s
  timeout: %s
  embedded_models:
    simple:
%s
models:
  - name: simple
sweep:
  concurrency: [2]
measurement:
  window: 200ms
  max_trials: 3
  stability: 50%%
  allow_unstable: true
%s`, proto, timeout, indent(params, "      "), extra))
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = pre + strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}

// A model that never answers: the request timeout fires inside the first
// windows and every request fails. Over HTTP each timeout is a transport
// failure, so the runner declares the server unreachable and the run exits
// 3: nothing about the model's performance was learnt. Over gRPC the
// deadline travels to the server (grpc-timeout), which may answer
// DEADLINE_EXCEEDED a moment before the client's own timer fires; that
// reply is a server error, not a transport failure, so the point is
// measured as 100% errors and the error_rate threshold fails with exit 1.
// Either way the run ends within the timeout plus one window.
func TestFaultServerHangs(t *testing.T) {
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			sc := embeddedFaultScenario(t, dir, proto, "300ms", `hang: "true"`, "thresholds:\n  - error_rate <= 1%\n")
			out := filepath.Join(dir, "r.json")
			r := runFault(t, context.Background(), "run", sc, "-q", "--out", out)
			// timeout + one window + drain and shutdown slack for -race on 2 cores.
			if limit := 300*time.Millisecond + 200*time.Millisecond + 4*time.Second; r.elapsed > limit {
				t.Errorf("run took %s, want under %s", r.elapsed, limit)
			}
			res := readResult(t, out)
			if pointErrors(res) == 0 {
				t.Fatalf("no timeouts counted: %s", r)
			}
			switch {
			case r.code == exitcode.Environment:
				// Either the run gave up on a server that answers nothing
				// (partial, "unreachable"), or, where the hang's timeouts
				// came slowly enough for the point to finish (a busy
				// machine), the point is could not measure: no request
				// succeeded.
				unreachable := res.Status == result.StatusPartial && strings.Contains(r.stdout+r.stderr, "unreachable")
				if !unreachable && !strings.Contains(r.stdout, "no request succeeded") {
					t.Errorf("exit 3 naming neither the unreachable server nor a point where no request succeeded: status %q\n%s", res.Status, r)
				}
			case r.code == exitcode.CheckFailed && proto == "grpc":
				if !strings.Contains(r.stdout, "error_rate is 1 fraction") {
					t.Errorf("exit 1 without the error budget failing at 100%%: %s", r)
				}
			default:
				t.Fatalf("want exit 3 (or 1 over gRPC), got %s", r)
			}
			if first := strings.Join(res.Points[0].Errors.First, "\n"); !strings.Contains(strings.ToLower(first), "deadline") {
				t.Errorf("first errors do not name the timeout:\n%s", first)
			}
		})
	}
}

// A hung model whose request timeout outlasts the measurement leaves
// every window without a single completed request. Such a point has no
// data, so no threshold may pass on it.
func TestFaultHangLongerThanMeasurementNeverPasses(t *testing.T) {
	dir := t.TempDir()
	sc := embeddedFaultScenario(t, dir, "http", "5s", `hang: "true"`, "thresholds:\n  - error_rate <= 1%\n")
	r := runFault(t, context.Background(), "run", sc, "-q", "--out-dir", "")
	if r.code == exitcode.OK {
		t.Fatalf("a server that answered nothing passed the gate: %s", r)
	}
}

// Injected error responses and dropped connections are counted, the error
// budget threshold fails with exit 1 and the report shows the first
// distinct errors.
func TestFaultErrorsAndDrops(t *testing.T) {
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			sc := embeddedFaultScenario(t, dir, proto, "1s", "error_rate: \"0.2\"\ndrop_rate: \"0.05\"\nseed: \"7\"",
				"thresholds:\n  - error_rate <= 1%\n")
			out, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
			r := runFault(t, context.Background(), "run", sc, "-q", "--out", out, "--markdown", md)
			if r.code != exitcode.CheckFailed {
				t.Fatalf("want exit 1, got %s", r)
			}
			res := readResult(t, out)
			p := res.Points[0]
			if rate := p.Summary.ErrorRate; rate < 0.1 || rate > 0.5 {
				t.Errorf("error rate %.3f, injected 0.2 errors + 0.05 drops", rate)
			}
			if !strings.Contains(r.stdout, "injected failure") {
				t.Errorf("console report does not show the injected error:\n%s", r.stdout)
			}
			mdText, err := os.ReadFile(md)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(mdText), "fail | threshold | error\\_rate &lt;= 1%") {
				t.Errorf("markdown report does not show the failed threshold:\n%s", mdText)
			}
			if first := strings.Join(p.Errors.First, "\n"); !strings.Contains(first, "EOF") && !strings.Contains(first, "dropped") {
				t.Errorf("the dropped connections are not among the first errors:\n%s", first)
			}
		})
	}
}

// The model is unloaded while it is being measured: every later request is
// refused by the server, the errors are counted and the run fails with the
// server's message.
func TestFaultModelUnloadedMidRun(t *testing.T) {
	srv := startServer(t, refserver.Options{})
	dir := t.TempDir()
	sc := remoteScenario(t, dir, srv.HTTPAddr(), "http", "thresholds:\n  - errors == 0\n")
	out := filepath.Join(dir, "r.json")
	done := make(chan cliRun, 1)
	go func() { done <- runFault(t, context.Background(), "run", sc, "-q", "--out", out) }()
	waitSuccesses(t, srv, "simple", 30)
	if err := srv.UnloadModel("simple"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != exitcode.CheckFailed && r.code != exitcode.Environment {
		t.Fatalf("want exit 1 or 3, got %s", r)
	}
	if pointErrors(readResult(t, out)) == 0 {
		t.Error("no request errors counted after the unload")
	}
	if !strings.Contains(r.stdout, "'simple' has no available versions") {
		t.Errorf("report does not say the model is gone:\n%s", r.stdout)
	}
}
