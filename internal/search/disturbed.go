package search

import (
	"slices"

	"github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// unjudgedBy turns a probe's outcome into "no judgement on the build" where
// the machine, not the load, explains it, and names the contention:
//
//   - a probe abort_on stopped is disturbed when the windows that met the
//     condition were measured on a machine too busy to measure on
//     (busy.TooBusy), or markedly busier than the windows of the search's
//     earlier probes at the same load or above (busy.Above): a
//     neighbour's burst is not the build's hopeless load;
//   - an unstable or unmeasured probe, already unjudged, gets the words
//     when the machine was too busy while it was measured.
//
// earlier are the points of the search's probes measured before p at its
// load or above.
func unjudgedBy(pr *result.Probe, conds []plan.Threshold, p *result.Point, earlier []*result.Point, numCPU int) {
	switch pr.Outcome {
	case result.ProbeAborted:
		now, ok := busy.Of(trippedWindows(conds, p))
		if !ok {
			return
		}
		if now.TooBusy(numCPU) {
			pr.Outcome, pr.Disturbance = result.ProbeDisturbed, "the machine was too busy: "+now.Text(numCPU)
			return
		}
		var ref []*result.Disturbance
		for _, e := range earlier {
			for i := range e.Windows {
				ref = append(ref, e.Windows[i].Disturbance)
			}
		}
		before, ok := busy.Of(ref)
		if !ok {
			return
		}
		if why, above := now.Above(before, numCPU); above {
			pr.Outcome, pr.Disturbance = result.ProbeDisturbed, "the machine was busier than during the search's earlier probes: "+why
		}
	case result.ProbeUnstable, result.ProbeFailed:
		if s, ok := busy.Windows(p); ok && s.TooBusy(numCPU) {
			pr.Disturbance = "the machine was too busy: " + s.Text(numCPU)
		}
	}
}

// trippedWindows are the disturbances of the windows of p that met one of
// its model's abort_on conditions (every kept window of an aborted probe
// is one of its windows); all of them when none did, as when a member of
// a mix stopped it.
func trippedWindows(conds []plan.Threshold, p *result.Point) []*result.Disturbance {
	var hit, all []*result.Disturbance
	for i := range p.Trials {
		t := &p.Trials[i]
		all = append(all, t.Disturbance)
		for _, th := range conds {
			if len(th.Selector.Models) > 0 && !slices.Contains(th.Selector.Models, p.Model) {
				continue
			}
			if v, ok := t.Metrics.Value(th.Metric); ok && plan.Holds(v, th.Op, th.Value) {
				hit = append(hit, t.Disturbance)
				break
			}
		}
	}
	if len(hit) == 0 {
		return all
	}
	return hit
}
