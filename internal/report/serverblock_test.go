package report

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// A server that counts requests and their time only (TF Serving's
// Prometheus figures) shows those, not a breakdown of zeros that would
// read as measured; Triton's full statistics keep perf_analyzer's lines.
func TestServerBlockWithoutBreakdown(t *testing.T) {
	var sb strings.Builder
	serverBlock(&sb, &result.Metrics{Server: &result.ServerStats{RequestCount: 40, AvgRequestUs: 1234.7}})
	got := sb.String()
	if !strings.Contains(got, "Successful request count: 40") || !strings.Contains(got, "Avg request latency: 1234 usec (the server reports no queue or compute breakdown)") ||
		strings.Contains(got, "Inference count") {
		t.Errorf("no-breakdown block:\n%s", got)
	}
	sb.Reset()
	serverBlock(&sb, &result.Metrics{Server: &result.ServerStats{RequestCount: 40, InferenceCount: 40, ExecutionCount: 10, AvgRequestUs: 1000, QueueUs: 200, ComputeInferUs: 700}})
	if got := sb.String(); !strings.Contains(got, "Inference count: 40") || !strings.Contains(got, "overhead 100 usec + queue 200 usec") {
		t.Errorf("full block:\n%s", got)
	}
}

// An imported CSV's server block has queue and compute times but no
// counts: those read as absent, never 0.
func TestServerBlockCountsAbsent(t *testing.T) {
	var sb strings.Builder
	serverBlock(&sb, &result.Metrics{
		Server: &result.ServerStats{QueueUs: 200, ComputeInferUs: 700},
		Absent: []string{"server.avg_request_us", "server.execution_count", "server.inference_count", "server.request_count"},
	})
	got := sb.String()
	for _, want := range []string{"Inference count: " + notCarried, "Successful request count: " + notCarried,
		"Avg request latency: " + notCarried + " (queue 200 usec"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, ": 0\n") || strings.Contains(got, "overhead") {
		t.Errorf("zeros or an overhead from an absent total:\n%s", got)
	}
}
