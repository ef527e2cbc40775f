package verdict

import (
	"errors"
	"math"
	"sort"

	"github.com/perfscen/perfscen/internal/stats"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// CompareOptions tune CompareRuns; zero fields take the defaults.
type CompareOptions struct {
	Alpha     float64 // two-sided Mann–Whitney level (default 0.01)
	MinChange float64 // practical threshold when trials allow a test (default 0.02)
	Tolerance float64 // relative-change rule without trials (default 0.05)
}

// MinCompareTrials is the fewest trials per side for a U test: with 3 the
// smallest two-sided p is 0.1, so no change could ever be significant.
const MinCompareTrials = 4

// Delta is one point × metric of two runs.
type Delta struct {
	Point, Metric string
	Old, New      float64 // the points' figures (result.Point.Figure)
	NOld, NNew    int
	Change        float64 // New/Old − 1
	// Lo and Hi bound Change (bootstrap 95%); HasStats is false when either
	// side had fewer than MinCompareTrials trials, and P and the interval
	// are then not available.
	Lo, Hi   float64
	P        float64
	HasStats bool
	// Verdict is "~" (no significant change), "improved", "regressed",
	// "new" (only in the new run) or "missing" (only in the old run).
	Verdict string
}

// Regressed reports whether any delta is a regression.
func Regressed(ds []Delta) bool {
	for _, d := range ds {
		if d.Verdict == "regressed" {
			return true
		}
	}
	return false
}

// compareMetrics are the metrics CompareRuns reports when both sides have
// them: an LLM point's time to first token, time per output token,
// inter-token gaps, token rate and goodput too.
var compareMetrics = []string{
	plan.MetricThroughput, plan.MetricLatencyAvg, plan.MetricP50, plan.MetricP90,
	plan.MetricP95, plan.MetricP99, plan.MetricServerQueue, plan.MetricServerInfer,
	plan.MetricTTFTP50, plan.MetricTTFTP99, plan.MetricTPOTP50, plan.MetricTPOTP99,
	plan.MetricITLP50, plan.MetricOutputTokensPS, plan.MetricGoodput,
}

// CompareRuns compares two result documents point by point, in the manner
// of benchstat: a two-sided Mann–Whitney U test on per-trial values plus
// a practical threshold when both sides have trials, a plain relative
// change rule when they do not (imported perf_analyzer summaries).
func CompareRuns(old, cur *result.Run, o CompareOptions) []Delta {
	if o.Alpha <= 0 {
		o.Alpha = plan.DefaultAlpha
	}
	if o.MinChange <= 0 {
		o.MinChange = 0.02
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.05
	}
	oldPts := map[string]*result.Point{}
	for i := range old.Points {
		oldPts[old.Points[i].ID] = &old.Points[i]
	}
	var out []Delta
	seen := map[string]bool{}
	for i := range cur.Points {
		np := &cur.Points[i]
		seen[np.ID] = true
		op := oldPts[np.ID]
		if op == nil {
			out = append(out, Delta{Point: np.ID, Verdict: "new"})
			continue
		}
		for _, m := range compareMetrics {
			if d, ok := compareMetric(op, np, m, o); ok {
				out = append(out, d)
			}
		}
	}
	var missing []string
	for id := range oldPts {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	for _, id := range missing {
		out = append(out, Delta{Point: id, Verdict: "missing"})
	}
	return out
}

func compareMetric(op, np *result.Point, m string, o CompareOptions) (Delta, bool) {
	// The values compared are the points' figures, the numbers every
	// report of either file prints; the trials only test the change.
	of, okOld := op.Figure(m)
	nf, okNew := np.Figure(m)
	ov, nv := pointValues(op, m), pointValues(np, m)
	if !okOld || !okNew || !(of.Value > 0) || !(nf.Value > 0) || !stats.Positive(ov) || !stats.Positive(nv) {
		return Delta{}, false
	}
	d := Delta{Point: np.ID, Metric: m, NOld: len(ov), NNew: len(nv), Verdict: "~"}
	d.Old, d.New = of.Value, nf.Value
	d.Change = d.New/d.Old - 1
	significant := math.Abs(d.Change) > o.Tolerance
	if len(ov) >= MinCompareTrials && len(nv) >= MinCompareTrials {
		d.HasStats = true
		lo, hi := stats.BootstrapRatio(nv, ov, DefaultResamples, CIConfidence, rngFor("compare", np.ID, m))
		d.Lo, d.Hi = lo-1, hi-1
		res, err := moremath.MannWhitneyUTest(nv, ov, moremath.LocationDiffers)
		switch {
		case errors.Is(err, moremath.ErrSamplesEqual):
			d.P = 1
		case err != nil:
			d.P = 1
		default:
			d.P = res.P
		}
		significant = d.P < o.Alpha && math.Abs(d.Change) >= o.MinChange
	}
	if significant {
		mi, _ := plan.LookupMetric(m)
		if (d.Change > 0) == mi.HigherBetter {
			d.Verdict = "improved"
		} else {
			d.Verdict = "regressed"
		}
	}
	return d, true
}
