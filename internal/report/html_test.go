package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestHTMLSelfContained(t *testing.T) {
	run, v := fixture(t)
	var b bytes.Buffer
	if err := HTML(&b, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("external reference %q", m)
	}
	for _, bad := range []string{"<script", "<link ", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// Comparisons, baseline gate, throughput vs p95, onnx/c=2's windows
	// (the only point with windows), server-side breakdown.
	if n := strings.Count(page, "<svg"); n != 5 {
		t.Errorf("%d inline SVG charts, want 5", n)
	}
	for _, want := range []string{"FAIL: 3 of 8 checks failed", "Comparisons: candidate ÷ reference", "Baseline gate: this run ÷ its history",
		"Server-side latency per request", "compute infer", "trt/c=2", "p95 &lt; 3ms", "onnx/c=2: throughput per window", `class="verdict fail"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<?xml") {
		t.Error("inlined SVG kept an XML prolog")
	}
	for i, s := range svgsOf(page) {
		checkSVG(t, "fixture chart "+string(rune('1'+i)), s)
	}
}

func TestHTMLWithoutServerStatsOrVerdict(t *testing.T) {
	run, _ := fixture(t)
	for i := range run.Points {
		run.Points[i].Summary.Server = nil
		run.Points[i].Windows = nil
	}
	var b bytes.Buffer
	if err := HTML(&b, run, nil, Options{Percentile: plan.MetricP99}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<svg"); n != 1 || !strings.Contains(b.String(), "Throughput vs p99 latency") {
		t.Errorf("%d charts, want only throughput vs p99", n)
	}
	if err := HTML(&b, run, nil, Options{Percentile: plan.MetricThroughput}); err == nil {
		t.Error("plotting throughput as latency succeeded")
	}
}

// An undecided run's verdict line is neither green nor red.
func TestHTMLVerdictColour(t *testing.T) {
	run, v := fixture(t)
	for i := range v.Checks {
		if v.Checks[i].Status == "fail" {
			v.Checks[i].Status = "inconclusive"
		}
	}
	var b bytes.Buffer
	if err := HTML(&b, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<p class="verdict undecided">INCONCLUSIVE`) {
		t.Errorf("verdict line:\n%s", b.String()[:2000])
	}
}

// The chart marks a point's baseline bound only for the metrics the
// baseline gated there, at the bound the check held it to; a check
// without a bound (uncalibrated, not compared) draws none.
func TestGateMarksAreTheBound(t *testing.T) {
	_, v := fixture(t)
	got := gateChecks(v)
	if len(got) != 1 || got[gateKey{"onnx/c=2", plan.MetricThroughput}].Bound != 845.2 {
		t.Fatalf("gated = %+v, want onnx/c=2 throughput at its bound 845.2", got)
	}
	for i := range v.Checks {
		if v.Checks[i].Point == "onnx/c=2" && v.Checks[i].Metric == plan.MetricThroughput {
			v.Checks[i].Uncalibrated, v.Checks[i].Bound = true, 0
		}
	}
	if got := gateChecks(v); len(got) != 0 {
		t.Fatalf("an uncalibrated check drew a mark: %+v", got)
	}
}
