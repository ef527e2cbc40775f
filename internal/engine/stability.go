package engine

import (
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// stabilityWindow is how many recent windows perf_analyzer compares; it is
// hard-coded there (inference_profiler.cc: stability_window = 3).
const stabilityWindow = 3

// stableAll applies the same rule to every window of tail: the kept trials
// of a point, all of them, must lie within the stability band, not only
// the first three that made it stable.
func stableAll(tail []result.Window, pct float64, throughputOnly bool) bool {
	if len(tail) == 0 {
		return false
	}
	limit := 1 + pct/100
	minT, maxT := tail[0].Throughput, tail[0].Throughput
	minL, maxL := tail[0].LatencyUs, tail[0].LatencyUs
	for _, w := range tail {
		if w.Throughput <= 0 {
			return false
		}
		minT, maxT = min(minT, w.Throughput), max(maxT, w.Throughput)
		minL, maxL = min(minL, w.LatencyUs), max(maxL, w.LatencyUs)
	}
	if maxT/minT > limit {
		return false
	}
	if throughputOnly {
		return true
	}
	if minL <= 0 {
		return maxL <= 0
	}
	return maxL/minL <= limit
}

// isStable is the full per-window decision: the combined rule, or for async
// loads perf_analyzer's fallback that accepts a level whose throughput alone
// is stable (it warns that latency is not stabilizing).
func isStable(ws []result.Window, pct float64, async bool) (stable, latencyUnstable bool) {
	if len(ws) < stabilityWindow {
		return false, false
	}
	return isStableAll(ws[len(ws)-stabilityWindow:], pct, async)
}

// isStableAll is isStable over every window of tail.
func isStableAll(tail []result.Window, pct float64, async bool) (stable, latencyUnstable bool) {
	if stableAll(tail, pct, false) {
		return true, false
	}
	if async && stableAll(tail, pct, true) {
		return true, true
	}
	return false, false
}

// spread is max/min throughput over ws, for messages (0 when a window had
// none).
func spread(ws []result.Window) float64 {
	if len(ws) == 0 {
		return 0
	}
	lo, hi := ws[0].Throughput, ws[0].Throughput
	for _, w := range ws {
		lo, hi = min(lo, w.Throughput), max(hi, w.Throughput)
	}
	if lo <= 0 {
		return 0
	}
	return hi / lo
}

// latencySpread is max/min of the stability latency over ws (0 when a
// window had none).
func latencySpread(ws []result.Window) float64 {
	if len(ws) == 0 {
		return 0
	}
	lo, hi := ws[0].LatencyUs, ws[0].LatencyUs
	for _, w := range ws {
		lo, hi = min(lo, w.LatencyUs), max(hi, w.LatencyUs)
	}
	if lo <= 0 {
		return 0
	}
	return hi / lo
}

// keepCount is how many windows a point keeps as trials: the requested
// trials, but never fewer than the stable triple perf_analyzer reports over.
func keepCount(trials int) int {
	return max(trials, stabilityWindow)
}

// keptRule decides when a point is stable. Without keepGoing (interleaved
// points, whose trials come later in rounds) it is perf_analyzer's rule:
// the last three windows agree. With keepGoing the kept trials are the
// last max(trials, 3) windows and the point is stable only when all of
// them lie within ±stability of each other (max/min ≤ 1+stability), not
// only the first three; windows are measured until that holds or the
// budget, max_trials plus the trials beyond three, is spent.
type keptRule struct {
	need, budget int
	pct          float64
	async        bool
}

func newKeptRule(m plan.Measurement, keepGoing, async bool) keptRule {
	r := keptRule{need: stabilityWindow, budget: m.MaxTrials, pct: m.StabilityPct, async: async}
	if keepGoing {
		r.need = keepCount(m.Trials)
		r.budget = m.MaxTrials + r.need - stabilityWindow
	}
	return r
}

// decide looks at the windows so far: stableAt is the index of the first
// kept window (-1 while not stable) and more whether to measure another.
func (r keptRule) decide(ws []result.Window) (stableAt int, more, latencyUnstable bool) {
	if len(ws) >= r.need {
		if st, lat := isStableAll(ws[len(ws)-r.need:], r.pct, r.async); st {
			return len(ws) - r.need, false, lat
		}
	}
	return -1, len(ws) < r.budget, false
}
