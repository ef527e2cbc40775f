package scenariorun

import (
	"fmt"
	"slices"
	"sync"

	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// ConfirmWindows is how many windows of a search's probe must meet an
// abort_on condition before it stops the probe. One window is one draw: a
// neighbour's burst makes a single window of a load that meets the bound
// look hopeless, and a search that took it for the load's figure would
// report a lower answer and fail its gate on what the machine did.
const ConfirmWindows = 2

// abortHook turns the plan's abort_on conditions into the engine's
// per-window hook: the first condition a window meets stops its point, and
// a point of the sweep stops the run with it (a search's probe only counts
// as failing).
//
// A search's probe is stopped only when the stop is confirmed: the
// condition holds on the median of its metric over the probe's windows so
// far (stabilization included), and at least ConfirmWindows of them met
// it. A single slow window among good ones leaves the probe measured and
// judged on its trials; a hopeless probe costs one more window.
func abortHook(p *plan.Plan) func(*plan.Point, *result.Window, *result.Metrics) (string, bool) {
	if len(p.AbortOn) == 0 {
		return nil
	}
	conds := p.AbortOn
	var mu sync.Mutex
	// seen holds, per probe and condition, the condition metric's value
	// in each of the probe's windows that had it.
	seen := map[string][][]float64{}
	return func(pt *plan.Point, _ *result.Window, m *result.Metrics) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		var vals [][]float64
		if pt.Search != "" {
			if vals = seen[pt.ID]; vals == nil {
				vals = make([][]float64, len(conds))
				seen[pt.ID] = vals
			}
		}
		reason := ""
		for i, th := range conds {
			if len(th.Selector.Models) > 0 && !slices.Contains(th.Selector.Models, pt.Model) {
				continue
			}
			v, ok := m.Value(th.Metric)
			if !ok {
				continue
			}
			if vals != nil {
				vals[i] = append(vals[i], v)
			}
			if reason != "" || !plan.Holds(v, th.Op, th.Value) {
				continue
			}
			if vals == nil {
				return fmt.Sprintf("abort_on `%s`: %s is %s", th.Text, th.Metric, valueText(th.Metric, v)), true
			}
			if r, ok := confirmed(th, vals[i]); ok {
				reason = r
			}
		}
		return reason, false
	}
}

// confirmed says whether a probe's windows confirm abort_on condition th:
// at least ConfirmWindows of them met it, and so does their median.
func confirmed(th plan.Threshold, vals []float64) (string, bool) {
	met := 0
	for _, v := range vals {
		if plan.Holds(v, th.Op, th.Value) {
			met++
		}
	}
	med := stats.Median(vals)
	if met < ConfirmWindows || !plan.Holds(med, th.Op, th.Value) {
		return "", false
	}
	return fmt.Sprintf("abort_on `%s`: %s is %s, the median of the probe's %d window(s) (%d of them met it)",
		th.Text, th.Metric, valueText(th.Metric, med), len(vals), met), true
}

func valueText(metric string, v float64) string {
	mi, _ := plan.LookupMetric(metric)
	switch mi.Unit {
	case "us":
		return fmt.Sprintf("%.3gms", v/1000)
	case "fraction":
		return fmt.Sprintf("%.3g%%", 100*v)
	}
	return fmt.Sprintf("%.4g %s", v, mi.Unit)
}
