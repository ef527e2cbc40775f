package verdict

import (
	"fmt"
	"sort"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// A server's CPU time per inference is what time-slicing cannot stretch,
// but a busy machine still moves it a little: a window in which the
// server's threads were preempted often also shows more CPU per inference
// (caches refilled after each preemption, more context switches). On the
// project's 2-core runner at load 20, mlp_reference's trials whose
// threads waited 3–16 µs for a CPU per µs of CPU ran 3–21% above their
// arm's median, those that waited under 1 µs within ±2% of it: a noise
// that hides a 10% slowdown from 20 interleaved trials per arm.
//
// A comparison of such a metric therefore uses each arm's quieter half:
// the trials in which the server waited least for a CPU per µs of CPU it
// used (its contention), at least Options.MinTrials of them. Contention is
// a ratio a slower build does not move (a build that computes twice as
// long is also runnable twice as long, and waits twice as long), and each
// arm is halved by its own median, so a candidate whose threads contend
// with each other keeps that contention in its kept trials. The test and
// its interval then run on the kept trials, as on any others.
var contentionSensitive = map[string]bool{plan.MetricServerCPU: true, plan.MetricServerWork: true}

// quieterHalf returns the values of metric in the quieter half of p's
// trials by the server's contention, and how many trials had values.
// ok is false where the metric is not one contention moves, a trial lacks
// the server's run-queue wait, or there are too few trials to halve: the
// caller then keeps every trial.
func quieterHalf(p *result.Point, metric string, minTrials int) (vs []float64, of int, ok bool) {
	if !contentionSensitive[metric] {
		return nil, 0, false
	}
	type trial struct{ v, contention float64 }
	var ts []trial
	for i := range p.Trials {
		m := &p.Trials[i].Metrics
		v, has := m.Value(metric)
		if !has || (m.Requests == 0 && m.Errors == 0) {
			continue // left out by armValues too
		}
		pr := m.Process
		if pr == nil || pr.RunQueueUs == nil || pr.CPUUs <= 0 {
			return nil, 0, false
		}
		ts = append(ts, trial{v, *pr.RunQueueUs / pr.CPUUs})
	}
	keep := max((len(ts)+1)/2, minTrials)
	if keep >= len(ts) {
		return nil, 0, false
	}
	// Stable, so equal contentions keep the trials' order: the same run
	// always keeps the same trials.
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].contention < ts[j].contention })
	for _, t := range ts[:keep] {
		vs = append(vs, t.v)
	}
	return vs, len(ts), true
}

// quieterNote says which trials a comparison kept.
func quieterNote(nc, ofc, nr, ofr int) string {
	return fmt.Sprintf("each arm's quieter half: the %d of %d candidate and %d of %d reference trials in which the server waited least for a CPU per µs of CPU (docs/statistics.md, \"Figures a busy machine cannot move\")", nc, ofc, nr, ofr)
}
