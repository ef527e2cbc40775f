package verdict

import (
	"slices"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// selects reports whether sel picks point p.
func selects(sel plan.Selector, p *result.Point) bool {
	if len(sel.Models) > 0 && !slices.Contains(sel.Models, p.Model) {
		return false
	}
	return atMatches(sel.At, p.Coords)
}

func atMatches(at map[string][]string, coords map[string]string) bool {
	for k, vals := range at {
		v, ok := coords[k]
		if !ok || !slices.Contains(vals, v) {
			return false
		}
	}
	return true
}

func sameCoords(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// trialValues returns metric per trial of p, leaving out trials without
// data (e.g. nothing completed) and counting them.
func trialValues(p *result.Point, metric string) (vs []float64, missing int) {
	for i := range p.Trials {
		if v, ok := p.Trials[i].Metrics.Value(metric); ok {
			vs = append(vs, v)
		} else {
			missing++
		}
	}
	return vs, missing
}
