package result

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestValuePresence(t *testing.T) {
	cases := []struct {
		name   string
		m      Metrics
		metric string
		want   float64
		ok     bool
	}{
		{"nothing completed", Metrics{}, plan.MetricP95, 0, false},
		{"measured", Metrics{Requests: 10, P95Us: 120}, plan.MetricP95, 120, true},
		{"imported csv row: latencies without a request count", Metrics{P50Us: 90, P95Us: 130}, plan.MetricP95, 130, true},
		{"throughput always present", Metrics{}, plan.MetricThroughput, 0, true},
		{"no server stats", Metrics{Requests: 1, P50Us: 1}, plan.MetricServerQueue, 0, false},
		{"server counters reset", Metrics{Server: &ServerStats{Reset: true, QueueUs: 5}}, plan.MetricServerQueue, 0, false},
		{"server stats", Metrics{Server: &ServerStats{QueueUs: 5}}, plan.MetricServerQueue, 5, true},
		{"unknown metric", Metrics{Requests: 1}, "p42", 0, false},
		{"error rate with nothing finished", Metrics{}, plan.MetricErrorRate, 0, false},
		{"error rate measured", Metrics{Requests: 99, Errors: 1, ErrorRate: 0.01}, plan.MetricErrorRate, 0.01, true},
		{"errors on an imported row", Metrics{Throughput: 50, P50Us: 100}, plan.MetricErrors, 0, true},
	}
	for _, c := range cases {
		got, ok := c.m.Value(c.metric)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: Value(%s) = %v, %v; want %v, %v", c.name, c.metric, got, ok, c.want, c.ok)
		}
	}
}

// The plan's default gate metrics are result metrics.
func TestDefaultGateMetricsAreMetrics(t *testing.T) {
	want := []string{plan.MetricThroughput, plan.MetricP50, plan.MetricP95, plan.MetricP99, plan.MetricServerWork, plan.MetricServerInstr}
	got := plan.DefaultGateMetrics()
	if len(got) != len(want) {
		t.Fatalf("plan.DefaultGateMetrics() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("plan.DefaultGateMetrics()[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}

// Every metric of the catalogue checks name has a getter here, and no
// getter computes a metric the catalogue does not list.
func TestEveryMetricHasAGetter(t *testing.T) {
	for _, name := range plan.MetricNames() {
		if getters[name] == nil {
			t.Errorf("metric %s has no getter", name)
		}
	}
	for name := range getters {
		if _, ok := plan.LookupMetric(name); !ok {
			t.Errorf("getter for %s, which plan does not list", name)
		}
	}
}

// The review's case: 90% of wake-ups wait ~20 µs and 10% ~3 ms. The
// 87.5% quantile is 20 µs; interpolating between the 75% and 90% ones of
// the nine kept quantiles reads milliseconds. With the whole distribution
// kept, At reads it exactly (to a bucket's width).
func TestWakeupDelayAtReadsTheDistribution(t *testing.T) {
	bucket := func(us float64) uint64 {
		for i := 0; ; i++ {
			if lo, hi := WakeupBucketBounds(i); us >= lo && us < hi {
				return uint64(i)
			}
		}
	}
	w := WakeupDelay{Mean: 318, N: 1000,
		Quantiles: []float64{20, 20, 20, 3000, 3000, 3000, 3000, 3000, 3000},
		Buckets:   [][2]uint64{{bucket(20), 900}, {bucket(3000), 100}}}
	if got := w.At(0.875); got < 18 || got > 22 {
		t.Errorf("87.5%% quantile %g µs, want about 20", got)
	}
	if got := w.At(0.95); got < 2800 || got > 3200 {
		t.Errorf("95%% quantile %g µs, want about 3000", got)
	}
	old := WakeupDelay{Mean: 318, N: 1000, Quantiles: []float64{20, 20, 3000, 3000, 3000, 3000, 3000, 3000, 3000}}
	if got := old.At(0.875); got < 2000 {
		t.Errorf("without buckets the interpolation is what it was: %g", got)
	}
	us, counts := w.Draws()
	if len(us) != 2 || counts[0] != 900 {
		t.Errorf("draws %v %v", us, counts)
	}
}
