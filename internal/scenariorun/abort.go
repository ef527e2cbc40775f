package scenariorun

import (
	"fmt"
	"slices"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// abortHook turns the plan's abort_on conditions into the engine's
// per-window hook: the first condition a window meets stops its point, and
// a point of the sweep stops the run with it (a search's probe only counts
// as failing).
func abortHook(p *plan.Plan) func(*plan.Point, *result.Window, *result.Metrics) (string, bool) {
	if len(p.AbortOn) == 0 {
		return nil
	}
	conds := p.AbortOn
	return func(pt *plan.Point, _ *result.Window, m *result.Metrics) (string, bool) {
		for _, th := range conds {
			if len(th.Selector.Models) > 0 && !slices.Contains(th.Selector.Models, pt.Model) {
				continue
			}
			v, ok := m.Value(th.Metric)
			if !ok || !plan.Holds(v, th.Op, th.Value) {
				continue
			}
			return fmt.Sprintf("abort_on `%s`: %s is %s", th.Text, th.Metric, valueText(th.Metric, v)), true
		}
		return "", false
	}
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
