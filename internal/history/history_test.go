package history

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/result"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixture is a baseline of 12 runs whose p95 steps from 10 ms to 13 ms (in µs) at
// run 7 while throughput stays level, and one later result file whose
// gate failed p95 (and one of another scenario, skipped).
func fixture() (*baseline.File, map[string]*result.Run) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tb := &baseline.Testbed{ID: "ci-runner", Noise: baseline.Noise{"m/c=1": {
		"p95":        {Runs: 12, Center: 11500, MDE: 0.2},
		"throughput": {Runs: 12, Center: 500, MDE: 0.05},
	}}}
	wobble := []float64{0, 0.01, -0.01, 0.02, -0.02, 0.01}
	for i := range 12 {
		p95 := 10000.0
		if i >= 6 {
			p95 = 13000
		}
		p95 *= 1 + wobble[i%6]
		r := baseline.Run{
			RunID: "run" + string(rune('a'+i)), Recorded: t0.Add(time.Duration(i) * 24 * time.Hour), PerfscenVersion: "v1.2.0",
			Points: map[string]*baseline.Point{"m/c=1": {Model: "m", Summary: map[string]float64{"p95": p95, "throughput": 500 * (1 + wobble[(i+3)%6])}}},
		}
		tb.Runs = append([]baseline.Run{r}, tb.Runs...) // most recent first
	}
	f := &baseline.File{FormatVersion: baseline.FormatVersion, Scenario: "demo", Testbeds: map[string]*baseline.Testbed{"ci-runner": tb}}

	later := &result.Run{RunID: "runz", Scenario: "demo", Finished: t0.Add(20 * 24 * time.Hour),
		Environment: result.Environment{Testbed: "ci-runner", PerfscenVersion: "v1.3.0"},
		Points:      []result.Point{{ID: "m/c=1", Model: "m"}},
		Verdict: &result.Verdict{Outcome: "fail", ExitCode: 1, Checks: []result.CheckOutcome{
			{Kind: "baseline", Point: "m/c=1", Metric: "p95", Status: "fail"},
			{Kind: "baseline", Point: "m/c=1", Metric: "throughput", Status: "pass"},
		}}}
	later.Points[0].Summary.Throughput = 490
	later.Points[0].Summary.P95Us = 13100
	later.Points[0].Summary.Requests = 4900
	other := &result.Run{RunID: "runy", Scenario: "other"}
	return f, map[string]*result.Run{"results/later.json": later, "results/other.json": other}
}

func TestBuildFindsTheStep(t *testing.T) {
	f, res := fixture()
	r := Build(f, res, nil)
	if len(r.Series) != 2 || len(r.Skipped) != 1 {
		t.Fatalf("series %d, skipped %v; want 2 series, 1 skipped", len(r.Series), r.Skipped)
	}
	for _, s := range r.Series {
		if len(s.Entries) != 13 {
			t.Errorf("%s: %d entries, want 13", s.Metric, len(s.Entries))
		}
		switch s.Metric {
		case "p95":
			if len(s.Changes) != 1 || s.Changes[0].Index != 6 {
				t.Errorf("p95 changes %+v, want one at run 7 (index 6)", s.Changes)
			}
			if !s.Entries[12].Failed || failedCount(&s) != 1 {
				t.Errorf("p95: the later run's failure is not marked once")
			}
		case "throughput":
			if len(s.Changes) != 0 || failedCount(&s) != 0 {
				t.Errorf("throughput: changes %+v, %d failed; want none", s.Changes, failedCount(&s))
			}
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	f, res := fixture()
	var b bytes.Buffer
	if err := Markdown(&b, Build(f, res, nil)); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "history.golden.md")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("markdown differs from %s (go test -update):\n%s", golden, b.String())
	}
}

func TestHTMLStructure(t *testing.T) {
	f, res := fixture()
	var b bytes.Buffer
	if err := HTML(&b, Build(f, res, nil)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if dir := os.Getenv("PERFSCEN_HISTORY_HTML"); dir != "" {
		// The screenshots target renders this page in a browser.
		if err := os.WriteFile(filepath.Join(dir, "history.html"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []struct {
		what string
		n    int
	}{
		{`<section class="series"`, 2},
		{`<svg`, 2},
		{`<tr class="fail">`, 1},
		{`<tr class="change">`, 1},
		{`<details open>`, 1}, // the p95 table, which failed and changed; throughput's stays folded
		{`<h2>testbed ci-runner</h2>`, 1},
		{`stroke="#ef6c00"`, 1}, // the change rule, drawn once in the p95 chart
		{`<link`, 0},
		{`src=`, 0},
		{`<script`, 0},
	} {
		if got := strings.Count(page, want.what); got < want.n || (want.n == 0 && got != 0) {
			t.Errorf("%q occurs %d times, want %d", want.what, got, want.n)
		}
	}
}
