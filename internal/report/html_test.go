package report

import (
	"bytes"
	"math"
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
	for _, bad := range []string{"<script src", "<link ", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := strings.Count(page, "<svg"); n != 2 {
		t.Errorf("%d inline SVG plots, want 2", n)
	}
	for _, want := range []string{"FAIL: 3 of 8 checks failed", "onnx baseline gate", "Server-side latency breakdown", "compute infer", "trt/c=2", "p95 &lt; 3ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<?xml") {
		t.Error("inlined SVG kept its XML prolog")
	}
}

func TestHTMLWithoutServerStatsOrVerdict(t *testing.T) {
	run, _ := fixture(t)
	for i := range run.Points {
		run.Points[i].Summary.Server = nil
	}
	var b bytes.Buffer
	if err := HTML(&b, run, nil, Options{Percentile: plan.MetricP99}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<svg"); n != 1 {
		t.Errorf("%d plots, want only the latency plot", n)
	}
	if err := HTML(&b, run, nil, Options{Percentile: plan.MetricThroughput}); err == nil {
		t.Error("plotting throughput as latency succeeded")
	}
}

// The HTML band is the gate's own bound: its lower edge is the throughput
// the baseline check held the point to, not a range of history medians.
func TestGateBandsAreTheBound(t *testing.T) {
	_, v := fixture(t)
	got := gateBands(v)
	if len(got) != 1 || got[0].Point != "onnx/c=2" || got[0].Lo != 845.2 || math.Abs(got[0].Hi-(2*872.9-845.2)) > 1e-9 {
		t.Fatalf("bands = %+v, want onnx/c=2 from the bound 845.2 to its mirror about 872.9", got)
	}
	for i := range v.Checks {
		if v.Checks[i].Point == "onnx/c=2" && v.Checks[i].Metric == plan.MetricThroughput {
			v.Checks[i].Uncalibrated, v.Checks[i].Bound = true, 0
		}
	}
	if got := gateBands(v); len(got) != 0 {
		t.Fatalf("an uncalibrated check drew a band: %+v", got)
	}
}
