package runner

import "github.com/perfscen/perfscen/internal/result"

// stabilityWindow is how many recent windows perf_analyzer compares; it is
// hard-coded there (inference_profiler.cc: stability_window = 3).
const stabilityWindow = 3

// stableTail applies perf_analyzer's rule to the last stabilityWindow windows
// of ws: none has zero throughput, max/min throughput ≤ 1+pct/100 and, unless
// throughputOnly, max/min stabilizing latency ≤ 1+pct/100.
func stableTail(ws []result.Window, pct float64, throughputOnly bool) bool {
	if len(ws) < stabilityWindow {
		return false
	}
	tail := ws[len(ws)-stabilityWindow:]
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
	if stableTail(ws, pct, false) {
		return true, false
	}
	if async && stableTail(ws, pct, true) {
		return true, true
	}
	return false, false
}

// keepCount is how many windows a point keeps as trials: the requested
// trials, but never fewer than the stable triple perf_analyzer reports over.
func keepCount(trials int) int {
	return max(trials, stabilityWindow)
}
