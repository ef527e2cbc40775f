package verdict

import (
	"math/rand/v2"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// perfscen compare prints the same number for a point as every report of
// either file: each delta's old and new values are the points' figures,
// and a metric with no figure on a side gets no delta.
func TestCompareRunsShowsFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	withServer := func(p result.Point, reset bool) result.Point {
		for i := range p.Trials {
			p.Trials[i].Metrics.Server = &result.ServerStats{RequestCount: 1000, QueueUs: 40 + float64(i), ComputeInferUs: 900 + 3*float64(i)}
		}
		p.Summary.Server = &result.ServerStats{RequestCount: 5000, QueueUs: 77, ComputeInferUs: 777, Reset: reset}
		return p
	}
	pooled := func(p result.Point) result.Point {
		// perf_analyzer's merge, which is not the median of the trials.
		p.Summary.Throughput, p.Summary.P95Us, p.Summary.LatencyAvgUs = 1234, 4321, 3210
		return p
	}
	imported := func(tp, p95 float64) result.Point {
		return result.Point{ID: "a/c=1", Status: result.PointImported,
			Summary: result.Metrics{Throughput: tp, P50Us: p95 / 2, P90Us: p95 * 0.9, P95Us: p95, P99Us: p95 * 1.2, LatencyAvgUs: p95 / 1.5}}
	}
	for _, tc := range []struct {
		name     string
		old, cur result.Point
		// without: metrics that have no figure on a side, so no delta.
		without []string
	}{
		{"trials, pooled summaries differ",
			pooled(mkPoint("a/c=1", "a", c(1), noisy(rng, 9, 1000, 20000, 0.05))),
			pooled(mkPoint("a/c=1", "a", c(1), noisy(rng, 9, 900, 22000, 0.05))), nil},
		{"imported summaries", imported(1000, 20000), imported(950, 21000), nil},
		{"server statistics", withServer(mkPoint("a/c=1", "a", c(1), noisy(rng, 6, 1000, 20000, 0.05)), false),
			withServer(mkPoint("a/c=1", "a", c(1), noisy(rng, 6, 1000, 20000, 0.05)), false), nil},
		// The server restarted during the new run: the reports show no
		// server figures there, so compare has none to compare.
		{"server statistics reset", withServer(mkPoint("a/c=1", "a", c(1), noisy(rng, 6, 1000, 20000, 0.05)), false),
			withServer(mkPoint("a/c=1", "a", c(1), noisy(rng, 6, 1000, 20000, 0.05)), true),
			[]string{plan.MetricServerQueue, plan.MetricServerInfer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := CompareRuns(mkRun(tc.old), mkRun(tc.cur), CompareOptions{})
			got := map[string]Delta{}
			for _, d := range ds {
				got[d.Metric] = d
			}
			for _, m := range compareMetrics {
				of, okOld := tc.old.Figure(m)
				nf, okNew := tc.cur.Figure(m)
				d, has := got[m]
				if has != (okOld && okNew) {
					t.Errorf("%s: delta %v, figures on both sides %v", m, has, okOld && okNew)
					continue
				}
				if !has {
					continue
				}
				if d.Old != of.Value || d.New != nf.Value {
					t.Errorf("%s: compare shows %g → %g, the reports show %g → %g", m, d.Old, d.New, of.Value, nf.Value)
				}
			}
			for _, m := range tc.without {
				if _, has := got[m]; has {
					t.Errorf("%s: a delta where a side has no figure", m)
				}
			}
		})
	}
}

// An LLM point is compared on its token figures too: a slower decode
// shows as a regression of time per output token and token rate, with
// the figures every report prints; an unchanged run shows no change.
func TestCompareRunsLLMMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	llm := func(tpot, ttft float64) result.Point {
		p := mkPoint("llm/c=8", "llm", c(8), noisy(rng, 8, 25, 300000, 0.02))
		for i := range p.Trials {
			j := 1 + 0.02*rng.NormFloat64()
			good := 24 * j
			p.Trials[i].Metrics.LLM = &result.LLMMetrics{Streamed: 100,
				TTFT:               result.Distribution{Count: 100, P50Us: ttft * j, P99Us: 2 * ttft * j},
				TPOT:               result.Distribution{Count: 100, P50Us: tpot * j, P99Us: 1.5 * tpot * j},
				ITL:                result.Distribution{Count: 3000, P50Us: tpot * j},
				OutputTokensPerSec: 25 * 32 * 1e4 / tpot * j, Goodput: &good}
		}
		// perf_analyzer-style pooled summary, which the figures replace
		// with the trials' medians.
		pooledGood := 99.0
		p.Summary.LLM = &result.LLMMetrics{Streamed: 800, TTFT: result.Distribution{Count: 800, P50Us: 1, P99Us: 1},
			TPOT: result.Distribution{Count: 800, P50Us: 1, P99Us: 1}, ITL: result.Distribution{Count: 24000, P50Us: 1},
			OutputTokensPerSec: 1, Goodput: &pooledGood}
		return p
	}
	deltas := func(old, cur result.Point) map[string]Delta {
		got := map[string]Delta{}
		for _, d := range CompareRuns(mkRun(old), mkRun(cur), CompareOptions{}) {
			got[d.Metric] = d
		}
		return got
	}
	base := llm(10000, 30000)
	slow := deltas(base, llm(13000, 30000))
	for m, want := range map[string]string{
		plan.MetricTPOTP50: "regressed", plan.MetricTPOTP99: "regressed",
		plan.MetricITLP50: "regressed", plan.MetricOutputTokensPS: "regressed", plan.MetricTTFTP50: "~",
	} {
		d, ok := slow[m]
		if !ok {
			t.Errorf("%s: no delta for an LLM point", m)
			continue
		}
		if d.Verdict != want {
			t.Errorf("%s: %s (%+.1f%%, p %.3g), want %s", m, d.Verdict, 100*d.Change, d.P, want)
		}
		if f, _ := base.Figure(m); d.Old != f.Value {
			t.Errorf("%s: old %g, the reports show %g", m, d.Old, f.Value)
		}
	}
	if _, ok := slow[plan.MetricGoodput]; !ok {
		t.Error("goodput: no delta")
	}
	for m, d := range deltas(base, llm(10000, 30000)) {
		if d.Verdict == "regressed" {
			t.Errorf("%s: an unchanged run regressed (%+.1f%%, p %.3g)", m, 100*d.Change, d.P)
		}
	}
}
