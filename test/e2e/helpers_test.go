package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/testbin"
	"github.com/perfscen/perfscen/runner/result"
)

// The helpers the end-to-end tests share: running the binary, writing
// scenarios and recording baselines, reading what a run wrote and
// checking the tables it printed.

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

// perfscenIn runs the binary with dir as its working directory.
func perfscenIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(perfscenBin(t), args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

// writeScenario writes a scenario file into dir and returns its path.
func writeScenario(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordOneRun runs sc once without a gate (in dir, writing first.json)
// and records it into the scenario's baseline, so the next run of sc is
// gated against a history of one; update adds flags to baseline update.
func recordOneRun(t *testing.T, dir, sc string, update ...string) {
	t.Helper()
	if code, out := perfscenIn(t, dir, "run", "-q", "--out", "first.json", "--no-baseline", sc); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	args := append(append([]string{"baseline", "update"}, update...), "--from", "first.json")
	if code, out := perfscenIn(t, dir, args...); code != 0 {
		t.Fatalf("recording: exit %d\n%s", code, out)
	}
}

// readRun reads a result file a run wrote.
func readRun(t *testing.T, path string) *result.Run {
	t.Helper()
	run, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

var percent = regexp.MustCompile(`([-+]?[0-9]+(?:\.[0-9]+)?)%`)

// checkRows fails on a negative bound or a percentage beyond ±1000% in
// the tables of out: figures no data supports.
func checkRows(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Machine during the trials") {
			continue // shares of CPU time, not figures of the gate
		}
		if strings.Contains(line, ">= -") {
			t.Errorf("%s: negative bound: %s", what, line)
		}
		for _, m := range percent.FindAllStringSubmatch(line, -1) {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil && (v > 1000 || v < -1000) {
				t.Errorf("%s: %s%% is no figure the data supports: %s", what, m[1], line)
			}
		}
	}
}

// runGated runs the binary with args and reads the result it wrote at
// path. A run that wrote no result, or one with no verdict, fails the
// test with the run's output.
func runGated(t *testing.T, path string, args ...string) (code int, stdout, stderr string, run *result.Run) {
	t.Helper()
	code, stdout, stderr = perfscen(t, args...)
	run, err := result.ReadFile(path)
	if err != nil {
		t.Fatalf("exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if run.Verdict == nil {
		t.Fatalf("exit %d, result has no verdict\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	return code, stdout, stderr, run
}

// checkDecision checks one comparison of a run on real time: its status
// is the one the data decides (decided) or inconclusive, a starved
// runner's honest answer, and the exit code, the recorded verdict and the
// summary are that status's (a failed or undecided check is named with
// where, the points it compared).
func checkDecision(t *testing.T, code int, stdout, stderr string, run *result.Run, check, where, status, decided string) {
	t.Helper()
	if status != decided && status != "inconclusive" {
		t.Fatalf("comparison %q, want %s or inconclusive; exit %d\nstdout:\n%s\nstderr:\n%s", status, decided, code, stdout, stderr)
	}
	outcomes := map[string]struct {
		code int
		says string
	}{
		"pass":         {0, "PASS: "},
		"fail":         {1, "failed: " + check + where},
		"inconclusive": {4, "undecided: " + check + where},
	}
	want := outcomes[status]
	if code != want.code || run.Verdict.ExitCode != code || !strings.Contains(stdout, want.says) {
		t.Fatalf("comparison %s: exit %d (verdict's %d), want %d with %q\nstdout:\n%s\nstderr:\n%s",
			status, code, run.Verdict.ExitCode, want.code, want.says, stdout, stderr)
	}
}

// checkUnreachableCandidate runs sc, whose candidate server cannot be
// reached: every server is reached before any load, so the run is exit 3
// naming the server, and the result it wrote at out has nothing measured
// on the released one.
func checkUnreachableCandidate(t *testing.T, sc, out string) {
	t.Helper()
	code, stdout, stderr := perfscen(t, "run", sc, "--out-dir", filepath.Dir(out), "--connect-timeout", "300ms")
	if code != 3 {
		t.Fatalf("unreachable candidate: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Said once: the summary line of the report names the server.
	if n := strings.Count(stdout+stderr, "server candidate"); n != 1 {
		t.Errorf("the unreachable server is named %d times, want once:\n%s\n%s", n, stdout, stderr)
	}
	if run := readRun(t, out); len(run.Points) != 0 {
		t.Errorf("%d point(s) measured before every server was reached", len(run.Points))
	}
}
