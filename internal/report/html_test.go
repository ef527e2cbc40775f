package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//`)

func TestHTMLSelfContained(t *testing.T) {
	run, v := fixture(t)
	bands := []Band{{Point: "onnx/c=1", Lo: 380, Hi: 440}, {Point: "onnx/c=2", Lo: 760, Hi: 850}, {Point: "trt/c=1", Lo: 950, Hi: 1020}}
	var b bytes.Buffer
	if err := HTML(&b, run, v, Options{Bands: bands}); err != nil {
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
	for _, want := range []string{"FAIL: 3 of 8 checks failed", "onnx baseline band", "Server-side latency breakdown", "compute infer", "trt/c=2", "p95 &lt; 3ms"} {
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
	if err := HTML(&b, run, nil, Options{Percentile: result.MetricP99}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<svg"); n != 1 {
		t.Errorf("%d plots, want only the latency plot", n)
	}
	if err := HTML(&b, run, nil, Options{Percentile: result.MetricThroughput}); err == nil {
		t.Error("plotting throughput as latency succeeded")
	}
}
