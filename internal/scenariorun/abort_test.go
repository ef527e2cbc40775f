package scenariorun

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// abort_on stops a point of the sweep at the first window that meets it,
// but a search's probe only when its windows confirm it: at least two of
// them met the condition, and so does their median. p99s in ms.
func TestAbortOnConfirmsAProbe(t *testing.T) {
	tests := []struct {
		name   string
		search string
		p99s   []float64
		stopAt int // index of the window that stops the point; -1 none
		run    bool
	}{
		{"sweep: the first window", "", []float64{30, 250, 40}, 1, true},
		{"probe: the reviewed case, one slow window among good ones", "s", []float64{45, 47, 46, 308, 45, 46, 47, 45}, -1, false},
		{"probe: hopeless from its first window", "s", []float64{320, 320}, 1, false},
		{"probe: one slow window first, then good ones", "s", []float64{308, 45, 46}, -1, false},
		{"probe: the load worsens until most windows are slow", "s", []float64{45, 250, 260}, 2, false},
		{"probe: two slow windows of four, median still under", "s", []float64{45, 250, 46, 260, 47}, -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{AbortOn: []plan.Threshold{{Text: "p99 > 200ms", Metric: plan.MetricP99, Op: ">", Value: 200000}}}
			hook := abortHook(p)
			pt := &plan.Point{ID: "m/s/c=4", Model: "m", Search: tc.search}
			at := -1
			for i, v := range tc.p99s {
				m := &result.Metrics{Requests: 50, P99Us: v * 1000}
				reason, stopRun := hook(pt, &result.Window{Index: i}, m)
				if reason != "" {
					at = i
					if stopRun != tc.run {
						t.Errorf("stopRun %v", stopRun)
					}
					break
				}
			}
			if at != tc.stopAt {
				t.Errorf("stopped at window %d, want %d", at, tc.stopAt)
			}
		})
	}
}
