package verdict

import (
	"errors"
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
)

// Comparisons evaluates same-run model comparisons with default options.
func Comparisons(cs []plan.Comparison, run *result.Run) []Check {
	return Options{}.Comparisons(cs, run)
}

// Comparisons checks candidate/reference ratios at each selected sweep
// point. A check passes only when the requirement is demonstrated: a
// one-sided Mann–Whitney U test of candidate against the ratio-scaled
// reference rejects at the comparison's α after Holm correction across
// all comparison checks, and the bootstrap 95% interval of the median
// ratio lies wholly beyond the required ratio.
func (o Options) Comparisons(cs []plan.Comparison, run *result.Run) []Check {
	o = o.withDefaults()
	var out []Check
	var tested []int // indexes into out of checks with a U test
	var ps, alphas []float64
	var rejectedByCI []bool
	for _, cmp := range cs {
		alpha := cmp.Alpha
		if alpha <= 0 {
			alpha = plan.DefaultAlpha
		}
		matched := 0
		for i := range run.Points {
			cand := &run.Points[i]
			if cand.Model != cmp.Candidate || !atMatches(cmp.Selector.At, cand.Coords) {
				continue
			}
			matched++
			ref := reference(run, cmp.Reference, cand.Coords)
			if !measured(cand) || ref != nil && !measured(ref) {
				for _, b := range bounds(cmp) {
					c := Check{Kind: KindComparison, Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID, Metric: cmp.Metric}
					if measured(cand) {
						out = append(out, notMeasured(c, ref))
					} else {
						out = append(out, notMeasured(c, cand))
					}
				}
				continue
			}
			for _, b := range bounds(cmp) {
				c, ok, ciClears := o.compareAt(cmp, b, cand, ref, alpha)
				out = append(out, c)
				if ok {
					tested = append(tested, len(out)-1)
					ps = append(ps, c.P)
					alphas = append(alphas, alpha)
					rejectedByCI = append(rejectedByCI, ciClears)
				}
			}
		}
		if matched == 0 {
			c := Check{Kind: KindComparison, Name: comparisonName(cmp, bound{}), Model: cmp.Candidate,
				Metric: cmp.Metric, Status: StatusFail, Message: "selector matches no measured point of the candidate"}
			if run.Status != "" && run.Status != result.StatusComplete {
				c.Status, c.Message = StatusSkip, fmt.Sprintf("not measured: the run is %s", run.Status)
			}
			out = append(out, c)
		}
	}
	rej := holm(ps, alphas)
	for j, i := range tested {
		c := &out[i]
		switch {
		case rej[j] && rejectedByCI[j]:
			c.Status = StatusPass
			c.Message = fmt.Sprintf("ratio %.3f, %.0f%% interval [%.3f, %.3f] %s %g (p=%.2g, n=%d/%d)",
				c.Value, 100*c.Confidence, c.Lo, c.Hi, c.Op, c.Bound, c.P, c.N, c.NRef)
		case !rej[j]:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("ratio %.3f not shown %s %g: p=%.2g is not below α=%g after Holm correction over %d check(s) (n=%d/%d)",
				c.Value, c.Op, c.Bound, c.P, alphas[j], len(tested), c.N, c.NRef)
		default:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("ratio %.3f: %.0f%% interval [%.3f, %.3f] does not clear %s %g (p=%.2g, n=%d/%d)",
				c.Value, 100*c.Confidence, c.Lo, c.Hi, c.Op, c.Bound, c.P, c.N, c.NRef)
		}
	}
	return out
}

type bound struct {
	op    string
	ratio float64
	alt   stats.LocationHypothesis
}

func bounds(cmp plan.Comparison) []bound {
	var bs []bound
	if cmp.MinRatio > 0 {
		bs = append(bs, bound{">=", cmp.MinRatio, stats.LocationGreater})
	}
	if cmp.MaxRatio > 0 {
		bs = append(bs, bound{"<=", cmp.MaxRatio, stats.LocationLess})
	}
	if len(bs) == 0 {
		bs = append(bs, bound{})
	}
	return bs
}

func comparisonName(cmp plan.Comparison, b bound) string {
	base := cmp.Name
	if base == "" {
		base = fmt.Sprintf("%s/%s %s", cmp.Candidate, cmp.Reference, cmp.Metric)
	}
	if b.op == "" {
		return base
	}
	return fmt.Sprintf("%s %s %g", base, b.op, b.ratio)
}

func reference(run *result.Run, alias string, coords map[string]string) *result.Point {
	for i := range run.Points {
		p := &run.Points[i]
		if p.Model == alias && sameCoords(p.Coords, coords) {
			return p
		}
	}
	return nil
}

// compareAt builds the check for one point and bound. tested reports that
// a U test ran (its p joins the Holm family); ciClears that the interval
// lies beyond the bound.
func (o Options) compareAt(cmp plan.Comparison, b bound, cand, ref *result.Point, alpha float64) (c Check, tested, ciClears bool) {
	c = Check{Kind: KindComparison, Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID,
		Metric: cmp.Metric, Unit: "ratio", Bound: b.ratio, Op: b.op, Confidence: CIConfidence,
		Method: "mann-whitney+bootstrap", Status: StatusFail}
	if b.op == "" {
		c.Message = "comparison has neither min_ratio nor max_ratio"
		return c, false, false
	}
	if ref == nil {
		c.Message = fmt.Sprintf("reference model %s has no point at the same sweep coordinates", cmp.Reference)
		return c, false, false
	}
	cv, cMiss := trialValues(cand, cmp.Metric)
	rv, rMiss := trialValues(ref, cmp.Metric)
	c.N, c.NRef = len(cv), len(rv)
	if cMiss+rMiss > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d trial(s) without %s data left out", cMiss+rMiss, cmp.Metric))
	}
	if !baseline.Positive(cv) || !baseline.Positive(rv) {
		c.Message = fmt.Sprintf("%s needs positive per-trial values in both arms (have %d and %d trials)", cmp.Metric, len(cv), len(rv))
		return c, false, false
	}
	mc, mr := baseline.Median(cv), baseline.Median(rv)
	c.Value = mc / mr
	c.Effect = c.Value - 1
	c.Lo, c.Hi = bootstrapRatio(cv, rv, o.Resamples, CIConfidence, rngFor(c.Name, cand.ID, ref.ID))
	c.MDE = sameRunMDE(cv, rv, alpha)
	if len(cv) < o.MinTrials || len(rv) < o.MinTrials {
		w := fmt.Sprintf("too few trials: %d candidate and %d reference, need at least %d per arm", len(cv), len(rv), o.MinTrials)
		c.Warnings = append(c.Warnings, w)
		c.Message = fmt.Sprintf("ratio %.3f cannot be judged: %s (raise measurement.trials)", c.Value, w)
		c.P = 1
		return c, false, false
	}
	scaled := make([]float64, len(rv))
	for i, v := range rv {
		scaled[i] = b.ratio * v
	}
	res, err := stats.MannWhitneyUTest(cv, scaled, b.alt)
	switch {
	case errors.Is(err, stats.ErrSamplesEqual):
		c.P = 1
	case err != nil:
		c.Message = fmt.Sprintf("mann-whitney test: %v", err)
		return c, false, false
	default:
		c.P = res.P
	}
	if b.op == ">=" {
		ciClears = c.Lo > b.ratio
	} else {
		ciClears = c.Hi < b.ratio
	}
	return c, true, ciClears
}

// sameRunMDE approximates the smallest margin beyond the bound the
// comparison shows with 80% probability: a normal approximation to the
// one-sided test on log medians.
func sameRunMDE(a, b []float64, alpha float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	sa, sb := baseline.LogSD(a), baseline.LogSD(b)
	se := math.Hypot(baseline.LogMedianSE(sa, len(a)), baseline.LogMedianSE(sb, len(b)))
	z := distuv.UnitNormal
	return math.Expm1((z.Quantile(1-alpha) + z.Quantile(baseline.DefaultPower)) * se)
}
