package engine

import (
	"fmt"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/result"
)

// serverDelta is perf_analyzer's per-window server-side breakdown: the
// difference of two cumulative snapshots, averaged per request. Any counter
// that went backwards means the server restarted in between; the figures
// are then meaningless, so they are zero and Reset is set.
func serverDelta(b, a kinds.Counters) *result.ServerStats {
	backwards := a.Inferences < b.Inferences || a.Executions < b.Executions
	for _, p := range [][2]kinds.Duration{
		{b.Success, a.Success}, {b.Fail, a.Fail}, {b.Queue, a.Queue},
		{b.ComputeInput, a.ComputeInput}, {b.ComputeInfer, a.ComputeInfer},
		{b.ComputeOutput, a.ComputeOutput},
	} {
		if p[1].Count < p[0].Count || p[1].Ns < p[0].Ns {
			backwards = true
		}
	}
	if backwards {
		return &result.ServerStats{Reset: true}
	}
	success := a.Success.Sub(b.Success)
	return &result.ServerStats{
		RequestCount:    int64(success.Count),
		InferenceCount:  int64(a.Inferences - b.Inferences),
		ExecutionCount:  int64(a.Executions - b.Executions),
		AvgRequestUs:    avgUs(success),
		QueueUs:         avgUs(a.Queue.Sub(b.Queue)),
		ComputeInputUs:  avgUs(a.ComputeInput.Sub(b.ComputeInput)),
		ComputeInferUs:  avgUs(a.ComputeInfer.Sub(b.ComputeInfer)),
		ComputeOutputUs: avgUs(a.ComputeOutput.Sub(b.ComputeOutput)),
	}
}

// noteResolution says once, on the point, when a window's server time is
// known more coarsely than the figure: the source printed its total in
// steps (StepNs) that, spread over the window's requests, exceed 1% of
// the mean (a long-running TF Serving's latency sum, printed with 6
// significant digits, moves in 10 ms steps past 10^9 µs).
func (pr *pointRunner) noteResolution(b, a kinds.Counters, s *result.ServerStats) {
	if pr.coarseNoted || s == nil || s.Reset || a.Success.StepNs == 0 || s.RequestCount <= 0 || s.AvgRequestUs <= 0 {
		return
	}
	res := float64(a.Success.StepNs) / 1000 / float64(s.RequestCount)
	if res <= 0.01*s.AvgRequestUs {
		return
	}
	pr.coarseNoted = true
	pr.notes = append(pr.notes, fmt.Sprintf("server figures are coarse: the server printed its total request time in steps of %s (6 significant digits of %s), so a window's mean server time is known only to ±%s at %d requests, %.0f%% of its %s; a longer window, or a restarted server, makes it finer",
		numfmt.Value(float64(a.Success.StepNs)/1000, "us"), numfmt.Value(float64(a.Success.Ns)/1000, "us"), numfmt.Value(res, "us"), s.RequestCount, 100*res/s.AvgRequestUs, numfmt.Value(s.AvgRequestUs, "us")))
}

func avgUs(d kinds.Duration) float64 {
	if d.Count == 0 {
		return 0
	}
	return float64(d.Ns) / float64(d.Count) / 1000
}

// mergeServer combines per-window server stats into one, weighting each
// average by its window's request count, as perf_analyzer sums the stable
// windows' deltas. A reset in any window taints the merge.
func mergeServer(list []*result.ServerStats) *result.ServerStats {
	var out result.ServerStats
	any := false
	for _, s := range list {
		if s == nil {
			continue
		}
		any = true
		if s.Reset {
			return &result.ServerStats{Reset: true}
		}
		n := float64(s.RequestCount)
		out.RequestCount += s.RequestCount
		out.InferenceCount += s.InferenceCount
		out.ExecutionCount += s.ExecutionCount
		out.AvgRequestUs += s.AvgRequestUs * n
		out.QueueUs += s.QueueUs * n
		out.ComputeInputUs += s.ComputeInputUs * n
		out.ComputeInferUs += s.ComputeInferUs * n
		out.ComputeOutputUs += s.ComputeOutputUs * n
	}
	if !any {
		return nil
	}
	if n := float64(out.RequestCount); n > 0 {
		out.AvgRequestUs /= n
		out.QueueUs /= n
		out.ComputeInputUs /= n
		out.ComputeInferUs /= n
		out.ComputeOutputUs /= n
	}
	return &out
}
