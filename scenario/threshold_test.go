package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in      string
		want    plan.Threshold
		wantErr string
	}{
		{"p95 < 30ms", plan.Threshold{Metric: "p95", Op: "<", Value: 30000}, ""},
		{"p99<=1.5s", plan.Threshold{Metric: "p99", Op: "<=", Value: 1.5e6}, ""},
		{"latency < 800us", plan.Threshold{Metric: "latency_avg", Op: "<", Value: 800}, ""},
		{"avg < 800µs", plan.Threshold{Metric: "latency_avg", Op: "<", Value: 800}, ""},
		{"max < 2000ns", plan.Threshold{Metric: "latency_max", Op: "<", Value: 2}, ""},
		{"compute_infer < 5ms", plan.Threshold{Metric: "server_compute_infer", Op: "<", Value: 5000}, ""},
		{"queue => 1ms", plan.Threshold{Metric: "server_queue", Op: ">=", Value: 1000}, ""},
		{"throughput >= 200/s", plan.Threshold{Metric: "throughput", Op: ">=", Value: 200}, ""},
		{"throughput >= 200 infer/s", plan.Threshold{Metric: "throughput", Op: ">=", Value: 200}, ""},
		{"throughput > 200", plan.Threshold{Metric: "throughput", Op: ">", Value: 200}, ""},
		{"error_rate <= 1%", plan.Threshold{Metric: "error_rate", Op: "<=", Value: 0.01}, ""},
		{"error_rate <= 0.02", plan.Threshold{Metric: "error_rate", Op: "<=", Value: 0.02}, ""},
		{"errors == 0", plan.Threshold{Metric: "errors", Op: "==", Value: 0}, ""},
		{"p95 < 30", plan.Threshold{}, "give a unit"},
		{"errors == 0ms", plan.Threshold{}, "is a count"},
		{"throughput > 5ms", plan.Threshold{}, "does not apply"},
		{"error_rate < 2", plan.Threshold{}, "above 100%"},
		{"p95 = 3ms", plan.Threshold{}, "not supported"},
		{"p95 < -3ms", plan.Threshold{}, "non-negative number"},
		{"p96 < 3ms", plan.Threshold{}, "did you mean `p90`"},
		{"bogus_metric_name < 3", plan.Threshold{}, "known metrics:"},
		{"p95", plan.Threshold{}, "not a threshold"},
		{"", plan.Threshold{}, "not a threshold"},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseThreshold(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tt.in, err)
			continue
		}
		tt.want.Text = strings.TrimSpace(tt.in)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("ParseThreshold(%q) (-want +got)\n%s", tt.in, d)
		}
	}
}

// Every metric name and alias resolves to a metric result knows.
func TestCanonicalMetric(t *testing.T) {
	for _, n := range plan.MetricNames() {
		if got, err := CanonicalMetric(n); err != nil || got != n {
			t.Errorf("CanonicalMetric(%q) = %q, %v", n, got, err)
		}
	}
	for a, want := range metricAliases {
		if _, ok := plan.LookupMetric(want); !ok {
			t.Errorf("alias %q points at unknown metric %q", a, want)
		}
		if got, _ := CanonicalMetric(a); got != want {
			t.Errorf("CanonicalMetric(%q) = %q, want %q", a, got, want)
		}
	}
}

func TestEditDistanceAndSuggest(t *testing.T) {
	if d := editDistance("concurency", "concurrency"); d != 1 {
		t.Errorf("distance = %d", d)
	}
	if s := suggest("concurency", []string{"mode", "concurrency", "request_rate"}); s != " (did you mean `concurrency`?)" {
		t.Errorf("suggest = %q", s)
	}
	if s := suggest("zzz", []string{"mode", "concurrency"}); s != "" {
		t.Errorf("suggest = %q, want none", s)
	}
}
