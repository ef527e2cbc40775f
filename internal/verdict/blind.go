package verdict

import "fmt"

// NameBlind is the display name of the KeyBlind check.
const NameBlind = "baseline can see a change"

// blind returns one undecided check for each point at which the baseline
// gate has checks and every one of them is not gated: a history so noisy
// on this testbed (a short one recorded on a busy runner, say) that no
// change under 100% would show. Each not-gated check is no pass on its
// own, but a point with nothing else to stand on would otherwise pass on
// nothing; so its run is inconclusive (exit 4), never a pass: at load 20
// on the 2-core runner, a CPU-bound model made 2× slower passed 3 runs in
// 12 that way, its history of 5 runs having one +20% outlier. A point
// where one baseline check is gated, or that failed or was undecided on
// another, is left to those checks, and so is a history still shorter
// than min_runs.
func blind(checks []Check, minRuns int) []Check {
	type tally struct {
		model   string
		total   int
		blind   int
		growing bool
		metrics []string
	}
	var order []string
	points := map[string]*tally{}
	for _, c := range checks {
		if c.Kind != KindBaseline || c.Key == KeyTestbed || c.Point == "" {
			continue
		}
		t := points[c.Point]
		if t == nil {
			t = &tally{model: c.Model}
			points[c.Point] = t
			order = append(order, c.Point)
		}
		t.total++
		if c.Method == "tolerance" || c.NRef < minRuns {
			// A history shorter than min_runs is still being recorded:
			// its checks are held to a tolerance, and a run that passes
			// them is how it grows.
			t.growing = true
		}
		if c.Status == StatusNotGated {
			t.blind++
			t.metrics = append(t.metrics, c.Metric)
		}
	}
	var out []Check
	for _, id := range order {
		t := points[id]
		if t.total == 0 || t.blind < t.total || t.growing {
			continue
		}
		out = append(out, Check{Kind: KindBaseline, Key: KeyBlind, Name: NameBlind, Model: t.model, Point: id,
			Status: StatusInconclusive, Class: ClassUndecided, NoValue: true,
			Message: fmt.Sprintf("inconclusive: no baseline check at %s could see a change (%d of %d not gated: %v); the history on this testbed is too noisy to gate this point — record a steadier one (more runs, a quieter runner) or gate it same-job A/B (docs/statistics.md, \"When no check can see a change\")",
				id, t.blind, t.total, t.metrics)})
	}
	return out
}
