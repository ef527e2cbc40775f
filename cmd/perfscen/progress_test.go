package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// In a log (stderr not a terminal) progress is one line per point start
// and end, and a window line at most every interval, each with the
// point, the window, throughput, p50/p99, errors and elapsed/estimated.
func TestProgressLinesInALog(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, now: func() time.Time { return clock }, interval: 10 * time.Second,
		start: clock, best: 96 * time.Second, worst: 220 * time.Second}
	pt := &plan.Point{ID: "simple/c=2"}
	p.event(engine.Event{Kind: engine.PointStarted, Index: 1, Total: 4, Point: pt})
	for i := 0; i < 25; i++ {
		clock = clock.Add(time.Second)
		p.event(engine.Event{Kind: engine.WindowDone, Index: 1, Total: 4, Point: pt,
			Window:  &result.Window{Index: i, Throughput: 92, Errors: 0},
			Metrics: &result.Metrics{P50Us: 20143, P99Us: 42175}, Stable: i == 24})
	}
	trial := result.Trial{Metrics: result.Metrics{Throughput: 92, P50Us: 20143, P99Us: 42175, Requests: 92}}
	p.event(engine.Event{Kind: engine.PointDone, Index: 1, Total: 4, Point: pt,
		Result: &result.Point{ID: "simple/c=2", Status: result.PointStable, Summary: trial.Metrics, Trials: []result.Trial{trial}}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// start, windows 10 and 20 (every 10 s), window 25 (stable), done.
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), buf.String())
	}
	want := "progress: [2/4] simple/c=2: window 10, 92.0 infer/s, p50 20.14ms, p99 42.17ms, 0 error(s), stabilizing; elapsed 10s of an estimated 1m36s–3m40s"
	if lines[1] != want {
		t.Errorf("window line\n got %q\nwant %q", lines[1], want)
	}
	if !strings.Contains(lines[3], "window 25") || !strings.Contains(lines[3], "stable;") {
		t.Errorf("the window that made the point stable is always shown: %q", lines[3])
	}
	if !strings.HasPrefix(lines[4], "progress: [2/4] simple/c=2: stable, 1 trial(s), 92.0 infer/s, p50 20.14ms, p99 42.17ms, 0 error(s); elapsed 25s") {
		t.Errorf("point line %q", lines[4])
	}
	if strings.Contains(buf.String(), "\r") {
		t.Error("carriage returns in a log")
	}
}

// Progress speaks the reports' number format (µs, never "us") and, for an
// openai-kind server, counts requests and tokens, not inferences.
func TestProgressUnitsAndFormat(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pl := &plan.Plan{Servers: []plan.Server{{Kind: plan.KindOpenAI}}}
	p := &progress{w: &buf, now: func() time.Time { return clock }, start: clock, plan: pl}
	pt := &plan.Point{ID: "llm/c=8"}
	p.event(engine.Event{Kind: engine.WindowDone, Total: 1, Point: pt, Stable: true,
		Window: &result.Window{Throughput: 41.26}, Metrics: &result.Metrics{P50Us: 895, P99Us: 1032}})
	m := result.Metrics{Throughput: 41.26, P50Us: 895, P99Us: 1032, LLM: &result.LLMMetrics{OutputTokensPerSec: 1320.4}}
	p.event(engine.Event{Kind: engine.PointDone, Total: 1, Point: pt,
		Result: &result.Point{ID: pt.ID, Status: result.PointStable, Summary: m}})
	got := buf.String()
	for _, want := range []string{"window 1, 41.3 req/s, p50 895µs, p99 1.03ms", "stable, 0 trial(s), 41.3 req/s, 1320.4 tokens/s, p50 895µs"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "infer/s") || strings.Contains(got, "us,") {
		t.Errorf("inferences or raw us in an LLM run's progress:\n%s", got)
	}
}

// --progress picks the mode; --quiet and never are silent, and a bad
// value is a command-line error.
func TestProgressModes(t *testing.T) {
	e := &env{stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	if progressFor(e, reportFlags{progress: progressNever}, nil) != nil || progressFor(e, reportFlags{progress: progressAuto, quiet: true}, nil) != nil {
		t.Error("never / --quiet still report progress")
	}
	if progressFor(e, reportFlags{progress: progressAuto}, nil) == nil {
		t.Error("auto is silent when stderr is not a terminal")
	}
	code, _, stderr := runCLI(t, "run", "--progress", "sometimes", "scenarios/quickstart.yaml")
	if code != 2 || !strings.Contains(stderr, "--progress") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A run over several scenarios ends with a table: each scenario, its
// outcome, exit code and deciding checks, then the combined exit code.
func TestRollupTable(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nname: bad\nserver: {embedded: true}\nmodels: [{name: nosuchmodel}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	worse := filepath.Join(dir, "worse.yaml")
	if err := os.WriteFile(worse, []byte("version: 1\nname: worse\nserver: {url: localhost:1}\nload: {concurrency: -1}\nmodels: [{name: simple}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCLI(t, "run", "-q", "--out-dir", dir, bad, worse)
	if code != 2 {
		t.Fatalf("exit %d", code)
	}
	i := strings.Index(stdout, "\nScenarios\n")
	if i < 0 {
		t.Fatalf("no roll-up:\n%s", stdout)
	}
	table := stdout[i:]
	for _, want := range []string{"bad ", "worse", "invalid", "nosuchmodel", "exit 2: an invalid scenario"} {
		if !strings.Contains(table, want) {
			t.Errorf("roll-up lacks %q:\n%s", want, table)
		}
	}
}

// A point's last progress line counts its failures as the summary does: a
// point whose server died kept no trial, and its 20 failures are not "0
// error(s)"; with trials, the kept trials' count comes first, then all.
func TestProgressPointErrors(t *testing.T) {
	for _, tt := range []struct {
		point *result.Point
		want  string
	}{
		{&result.Point{ID: "p", Status: result.PointFailed, Errors: result.ErrorInfo{Count: 20}}, "failed, 0 trial(s), 0.0 infer/s, p50 -, p99 -, 20 error(s);"},
		{&result.Point{ID: "p", Status: result.PointStable, Summary: result.Metrics{Throughput: 10, Errors: 2},
			Trials: []result.Trial{{Metrics: result.Metrics{Throughput: 10, Errors: 2}}}, Errors: result.ErrorInfo{Count: 5}}, "2 error(s) (5 in all);"},
		{&result.Point{ID: "p", Status: result.PointStable, Summary: result.Metrics{Throughput: 10, Errors: 2},
			Trials: []result.Trial{{Metrics: result.Metrics{Throughput: 10, Errors: 2}}}, Errors: result.ErrorInfo{Count: 2}}, ", 2 error(s);"},
	} {
		var buf bytes.Buffer
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p := &progress{w: &buf, now: func() time.Time { return clock }, start: clock}
		p.event(engine.Event{Kind: engine.PointDone, Total: 1, Point: &plan.Point{ID: "p"}, Result: tt.point})
		if !strings.Contains(buf.String(), tt.want) {
			t.Errorf("got %q, want it to contain %q", buf.String(), tt.want)
		}
	}
}
