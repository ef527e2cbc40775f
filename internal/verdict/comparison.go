package verdict

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/stats"

	moremath "github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Comparisons checks candidate/reference ratios at each selected sweep
// point and decides three ways. Pass: the requirement is demonstrated — a
// one-sided rank test rejects "ratio on the wrong side of the bound" after
// Holm correction across all comparison checks, and the bootstrap 95%
// interval of the median ratio lies wholly beyond the bound. Arms measured
// in interleaved rounds pair by round (pairedLogRatios): the test is
// Wilcoxon's signed-rank test on the rounds' log ratios and the ratio the
// median of the rounds' ratios. Other arms are independent samples: a
// Mann–Whitney U test of candidate against the ratio-scaled reference,
// and the ratio of the arms' medians. Fail: the opposite is
// demonstrated the same way (the test in the other direction rejects and
// the interval lies wholly on the wrong side). Otherwise the check is
// inconclusive: the interval straddles the bound, and more trials
// (interleaved in both arms) can decide it. Each look uses its share of α
// (see Settle), so deciding again on more trials keeps both error rates.
//
// A comparison with an unchanged ratio (two builds of one model: 1) fails
// as the baseline gate does with a tolerance: when a change from the
// unchanged ratio is shown the same way (the rank test against it, Holm-
// corrected, and the interval wholly beyond it) and the observed ratio
// lies beyond the bound, clear and large enough to matter. Its pass is
// unchanged. A false fail still needs the rank test to reject a true
// null, so its rate stays within α; a 10% slowdown against a 5% bound no
// longer has to be shown 5% beyond the bound to fail.
func (o Options) Comparisons(cs []plan.Comparison, run *result.Run) []Check {
	o = o.withDefaults()
	var out []Check
	var tested []int // indexes into out of checks with U tests
	var pPass, pFail, alphas []float64
	var ciPass, ciFail []bool
	// ci95 is each tested check's 95% interval, the one the decision requires.
	var ci95 [][2]float64
	for ci, cmp := range cs {
		alpha := cmp.Alpha
		if alpha <= 0 {
			alpha = plan.DefaultAlpha
		}
		alpha = o.spend(alpha)
		matched := 0
		for i := range run.Points {
			cand := &run.Points[i]
			if cand.Model != cmp.Candidate || !appliesTo(cmp.Metric, cand) || !atMatches(cmp.Selector.At, cand.Coords) {
				continue
			}
			matched++
			ref := reference(run, cmp.Reference, cand.Coords)
			if isSearched(cand) {
				for _, b := range bounds(cmp) {
					c := Check{Kind: KindComparison, Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID, Metric: cmp.Metric,
						Status: StatusFail, NoValue: true, Message: fmt.Sprintf("reference model %s has no search at the same coordinates", cmp.Reference)}
					if ref != nil {
						c = compareSearched(cmp, b, cand, ref)
					}
					c.Key = comparisonKey(ci, b)
					out = append(out, c)
				}
				continue
			}
			if !measured(cand) || ref != nil && !measured(ref) {
				for _, b := range bounds(cmp) {
					c := Check{Kind: KindComparison, Key: comparisonKey(ci, b), Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID, Metric: cmp.Metric}
					if measured(cand) {
						out = append(out, notMeasured(c, ref))
					} else {
						out = append(out, notMeasured(c, cand))
					}
				}
				continue
			}
			if failedAll := firstOf(noneSucceeded, cand, ref); failedAll != nil {
				for _, b := range bounds(cmp) {
					out = append(out, Check{Kind: KindComparison, Key: comparisonKey(ci, b), Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID,
						Metric: cmp.Metric, Status: StatusFail, NoValue: true, Environment: true,
						Message: fmt.Sprintf("could not measure: no request succeeded at %s (%d failed)", failedAll.ID, failedAll.FigureMetrics().Errors)})
				}
				continue
			}
			for _, b := range bounds(cmp) {
				c, t := o.compareAt(cmp, b, cand, ref, alpha)
				c.Key = comparisonKey(ci, b)
				out = append(out, c)
				if t.ok {
					tested = append(tested, len(out)-1)
					pPass, pFail = append(pPass, t.pPass), append(pFail, t.pFail)
					alphas = append(alphas, alpha)
					ciPass, ciFail = append(ciPass, t.ciPass), append(ciFail, t.ciFail)
					ci95 = append(ci95, [2]float64{t.lo95, t.hi95})
				}
			}
		}
		if matched == 0 {
			c := Check{Kind: KindComparison, Key: comparisonKey(ci, bound{}), Name: comparisonName(cmp, bound{}), Model: cmp.Candidate,
				Metric: cmp.Metric, Status: StatusFail, Message: "selector matches no measured point of the candidate"}
			if run.Status != "" && run.Status != result.StatusComplete {
				c.Status, c.Message = StatusSkip, fmt.Sprintf("not measured: the run is %s", run.Status)
			}
			out = append(out, c)
		}
	}
	rejPass, rejFail := stats.Holm(pPass, alphas), stats.Holm(pFail, alphas)
	hPass, hFail := holmSteps(pPass, alphas), holmSteps(pFail, alphas)
	for j, i := range tested {
		c := &out[i]
		d := decision{c: c, m: len(tested), look: o.lookNote(), lo95: ci95[j][0], hi95: ci95[j][1],
			pass: testSide{p: pPass[j], holm: hPass[j], rejected: rejPass[j], ci: ciPass[j]},
			fail: testSide{p: pFail[j], holm: hFail[j], rejected: rejFail[j], ci: ciFail[j]}}
		switch {
		case rejPass[j] && ciPass[j]:
			c.Status, c.P = StatusPass, pPass[j]
			c.Message = d.passed()
		case rejFail[j] && ciFail[j]:
			c.Status, c.P = StatusFail, pFail[j]
			c.Message = d.failed()
		default:
			c.Status, c.Class = StatusInconclusive, ClassUndecided
			s, _ := d.undecided()
			c.P = s.p
			c.Message = d.inconclusive()
		}
	}
	return out
}

// needText renders the trial count that would decide an inconclusive check.
func needText(n int, unit string) string {
	if n <= 0 {
		return "; no number of trials decides it at this noise"
	}
	return fmt.Sprintf("; about %d trials %s would decide it", n, unit)
}

// armValues are a comparison arm's per-trial values of metric. Trials
// without data for it are left out and counted, and so are trials in which
// no request finished: their zero throughput says the window was shorter
// than a request, not how fast the server is.
func armValues(p *result.Point, metric string) (vs []float64, missing int) {
	for i := range p.Trials {
		if v, ok := trialValue(&p.Trials[i], metric); ok {
			vs = append(vs, v)
		} else {
			missing++
		}
	}
	return vs, missing
}

// emptyArm names the arm without data: the candidate's point, else the
// reference's.
func emptyArm(cv []float64, cand, ref *result.Point) string {
	if len(cv) == 0 {
		return cand.ID
	}
	return ref.ID
}

type bound struct {
	op    string
	ratio float64
	alt   moremath.LocationHypothesis
}

func bounds(cmp plan.Comparison) []bound {
	var bs []bound
	if cmp.MinRatio > 0 {
		bs = append(bs, bound{">=", cmp.MinRatio, moremath.LocationGreater})
	}
	if cmp.MaxRatio > 0 {
		bs = append(bs, bound{"<=", cmp.MaxRatio, moremath.LocationLess})
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
	return fmt.Sprintf("%s %s %s", base, b.op, numfmt.Significant(b.ratio, 6))
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

// tests are the two one-sided tests of one comparison check: pPass
// rejects "not beyond the bound", pFail rejects "beyond the bound"; ok
// says they ran (their p values join the Holm families).
type tests struct {
	ok             bool
	pPass, pFail   float64
	ciPass, ciFail bool
	lo95, hi95     float64
}

// compareAt builds the check for one point and bound and runs its tests.
func (o Options) compareAt(cmp plan.Comparison, b bound, cand, ref *result.Point, alpha float64) (c Check, t tests) {
	c = Check{Kind: KindComparison, Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID,
		Metric: cmp.Metric, Unit: "ratio", Bound: b.ratio, Op: b.op, Confidence: CIConfidence,
		Method: methodUnpaired, Status: StatusFail}
	if b.op == "" {
		c.Message = "comparison has neither min_ratio nor max_ratio"
		return c, t
	}
	if ref == nil {
		c.Message = fmt.Sprintf("reference model %s has no point at the same sweep coordinates", cmp.Reference)
		return c, t
	}
	c.RefPoint = ref.ID
	cv, cMiss := armValues(cand, cmp.Metric)
	rv, rMiss := armValues(ref, cmp.Metric)
	c.N, c.NRef = len(cv), len(rv)
	if cMiss+rMiss > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%d trial(s) without %s data left out", cMiss+rMiss, cmp.Metric))
	}
	if len(cv) == 0 || len(rv) == 0 {
		// Nothing to compare is no verdict on either build.
		c.Environment, c.NoValue = true, true
		c.Message = fmt.Sprintf("could not measure: %s in no trial of %s (%d candidate and %d reference trial(s) with data)",
			cmp.Metric, emptyArm(cv, cand, ref), len(cv), len(rv))
		return c, t
	}
	if !stats.Positive(cv) || !stats.Positive(rv) {
		c.Message = fmt.Sprintf("%s needs positive per-trial values in both arms (have %d and %d trials)", cmp.Metric, len(cv), len(rv))
		if !stats.Positive(rv) {
			// The reference had windows of nothing too (no request met
			// an LLM's goodput SLO on a machine starving both arms): no
			// ratio is shown either way, so nothing is demonstrated about
			// the candidate. At load 66 an unchanged candidate failed so.
			c.Status, c.Class = StatusInconclusive, ClassUndecided
			c.Message = "inconclusive: " + c.Message + ", and the reference had trials of 0 too: no ratio is shown either way"
		}
		// The medians still say how the arms compare (a candidate whose
		// goodput is 0 is 100% below); without a reference figure there
		// is no ratio, and no effect to print.
		if mr := stats.Median(rv); mr > 0 {
			c.Value = stats.Median(cv) / mr
			c.Effect = c.Value - 1
		} else {
			c.NoValue = true
		}
		return c, t
	}
	if w := imbalance(cand, ref); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	// Rounds of interleaved arms pair their trials: the test and the
	// interval are then on the pairs' log ratios (Wilcoxon's signed-rank
	// test, a bootstrap of their median), which the machine's slow swings
	// move far less than either arm.
	d, paired := pairedLogRatios(cand, ref, cmp.Metric)
	paired = paired && len(d) >= o.MinTrials
	var se float64
	n := max(len(cv), len(rv))
	rng := rngFor(c.Name, cand.ID, ref.ID)
	interval := func(conf float64, rng *rand.Rand) (lo, hi float64) {
		if paired {
			lo, hi = stats.BootstrapMedian(d, o.Resamples, conf, rng)
			return math.Exp(lo), math.Exp(hi)
		}
		return stats.BootstrapRatio(cv, rv, o.Resamples, conf, rng)
	}
	if paired {
		c.Method = methodPaired
		c.N, c.NRef, n = len(d), len(d), len(d)
		c.Value = math.Exp(stats.Median(d))
		_, sd := stats.MeanSD(d)
		se = stats.LogMedianSE(sd, len(d))
	} else {
		c.Value = stats.Median(cv) / stats.Median(rv)
		se = armsSE(cv, rv)
	}
	c.Effect = c.Value - 1
	// Two intervals: the 95% one the decision also requires to lie
	// beyond the bound (t.lo95, t.hi95), and the one shown, at the level
	// of the rank test that decides (each side α of this look): a 95%
	// interval wholly beyond the bound beside an undecided check read as
	// a contradiction when the test decided at α = 0.9%.
	t.lo95, t.hi95 = interval(CIConfidence, rng)
	c.Lo, c.Hi = t.lo95, t.hi95
	if level := 1 - 2*alpha; level > CIConfidence {
		c.Confidence = level
		c.Lo, c.Hi = interval(level, rngFor(c.Name, cand.ID, ref.ID))
	}
	c.Unchanged = cmp.UnchangedRatio
	// failAt is the ratio a fail must be shown beyond: the bound, or,
	// for arms with an unchanged ratio, that ratio (and the observed
	// ratio must then lie beyond the bound too).
	failAt := b.ratio
	if c.Unchanged > 0 {
		failAt = c.Unchanged
	}
	c.MDE = mdeAt(se, alpha)
	target := b.ratio
	if c.Unchanged > 0 && beyond(b, c.Value) {
		target = failAt
	}
	c.NeedN = needAt(se, n, c.Value, target, o.lastLookAlpha(alpha))
	if len(cv) < o.MinTrials || len(rv) < o.MinTrials {
		w := fmt.Sprintf("too few trials: %d candidate and %d reference, need at least %d per arm", len(cv), len(rv), o.MinTrials)
		c.Warnings = append(c.Warnings, w)
		if len(cand.Trials) >= o.MinTrials && len(ref.Trials) >= o.MinTrials {
			// Enough trials were measured, but some had no data (a
			// window in which no request finished): that says nothing
			// about the builds, and more trials can still decide.
			c.Status, c.Class = StatusInconclusive, ClassUndecided
			c.NeedN = max(c.NeedN, o.MinTrials)
			c.Message = fmt.Sprintf("inconclusive: ratio %s, but only %d candidate and %d reference trial(s) have %s data (%d had none), need at least %d per arm%s",
				numfmt.Ratio(c.Value), len(cv), len(rv), cmp.Metric, cMiss+rMiss, o.MinTrials, needText(c.NeedN, "per arm"))
			return c, t
		}
		// No test ran: P stays 0, and no p-value is shown.
		c.Message = fmt.Sprintf("ratio %s cannot be judged: %s (raise measurement.trials)", numfmt.Ratio(c.Value), w)
		return c, t
	}
	opposite := moremath.LocationLess
	if b.alt == moremath.LocationLess {
		opposite = moremath.LocationGreater
	}
	if paired {
		t.pPass = stats.SignedRankP(shifted(d, b.ratio), b.alt == moremath.LocationGreater)
		t.pFail = stats.SignedRankP(shifted(d, failAt), opposite == moremath.LocationGreater)
	} else {
		var err error
		if t.pPass, err = uTest(cv, scaledBy(rv, b.ratio), b.alt); err != nil {
			c.Message = fmt.Sprintf("mann-whitney test: %v", err)
			return c, t
		}
		if t.pFail, err = uTest(cv, scaledBy(rv, failAt), opposite); err != nil {
			c.Message = fmt.Sprintf("mann-whitney test: %v", err)
			return c, t
		}
	}
	if b.op == ">=" {
		t.ciPass, t.ciFail = t.lo95 > b.ratio, t.hi95 < failAt
	} else {
		t.ciPass, t.ciFail = t.hi95 < b.ratio, t.lo95 > failAt
	}
	if c.Unchanged > 0 {
		// A change shown, but one the observed ratio puts within the
		// bound, is not large enough to fail on.
		t.ciFail = t.ciFail && beyond(b, c.Value)
	}
	t.ok = true
	return c, t
}

// scaledBy is vs, each multiplied by r.
func scaledBy(vs []float64, r float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = r * v
	}
	return out
}

// beyond says ratio lies on the failing side of the bound.
func beyond(b bound, ratio float64) bool { return beyondBound(b.op, b.ratio, ratio) }

// uTest is a one-sided Mann–Whitney U test; identical samples give p = 1.
func uTest(a, b []float64, alt moremath.LocationHypothesis) (float64, error) {
	res, err := moremath.MannWhitneyUTest(a, b, alt)
	switch {
	case errors.Is(err, moremath.ErrSamplesEqual):
		return 1, nil
	case err != nil:
		return 0, err
	}
	return res.P, nil
}

// lastLookAlpha is the level the last look will decide at, given this
// look's (alpha = o.spend(level)).
func (o Options) lastLookAlpha(alpha float64) float64 {
	if o.MaxLooks <= 1 {
		return alpha
	}
	level := alpha / firstLookShare
	if o.Look > 1 {
		level = alpha * float64(o.MaxLooks-1) / (1 - firstLookShare)
	}
	last := o
	last.Look = o.MaxLooks
	return last.spend(level)
}

// armsSE is the standard error of the log ratio of two arms' medians,
// measured as independent samples.
func armsSE(a, b []float64) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	return math.Hypot(stats.LogMedianSE(stats.LogSD(a), len(a)), stats.LogMedianSE(stats.LogSD(b), len(b)))
}

// needAt is about how many trials per arm would put the observed ratio's
// distance from the bound at the detectable margin of a one-sided test at
// alpha with 80% power, given the log ratio's standard error se at n
// trials per arm: it shrinks as 1/√n. 0 when the observed ratio sits on
// the bound or nothing is known of the spread.
func needAt(se float64, n int, ratio, bound, alpha float64) int {
	if !(se > 0) || n < 2 || !(ratio > 0) || !(bound > 0) {
		return 0
	}
	d := math.Abs(math.Log(ratio / bound))
	if d < 1e-9 {
		return 0
	}
	z := distuv.UnitNormal
	target := d / (z.Quantile(1-alpha) + z.Quantile(stats.DefaultPower))
	need := math.Ceil(float64(n) * (se / target) * (se / target))
	if need > 1e6 {
		return 0
	}
	return max(int(need), n)
}

// mdeAt approximates the smallest margin beyond the bound the comparison
// shows with 80% probability: a normal approximation to the one-sided
// test on the log ratio, whose standard error is se.
func mdeAt(se, alpha float64) float64 {
	if !(se > 0) {
		return 0
	}
	z := distuv.UnitNormal
	return math.Expm1((z.Quantile(1-alpha) + z.Quantile(stats.DefaultPower)) * se)
}

// firstOf is the first of the points (nil ones skipped) that is, or nil.
func firstOf(is func(*result.Point) bool, ps ...*result.Point) *result.Point {
	for _, p := range ps {
		if p != nil && is(p) {
			return p
		}
	}
	return nil
}
