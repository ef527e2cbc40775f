package verdict

import (
	"fmt"
	"math"

	busyrule "github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/internal/numfmt"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Kinds of the checks searches and abort_on add.
const (
	KindSearch Kind = "search"
	KindAbort  Kind = "abort"
)

// Keys of those checks.
const (
	// KeySearch is a search's own check: it found a load meeting its
	// condition.
	KeySearch CheckKey = "search.found"
	// KeyAborted fails a point of the sweep an abort_on condition stopped.
	KeyAborted CheckKey = "point.aborted"
)

// isProbe reports whether p is a probe of a search: its figures belong to
// the search, which judges them; the sweep's rules do not.
func isProbe(p *result.Point) bool { return p.Search != "" }

// isSearched reports whether p is a search's result point, whose one
// figure is the value found.
func isSearched(p *result.Point) bool { return p.Status == result.PointSearched }

// appliesTo says whether a rule on metric judges point p: search figures
// exist at search result points only, and the sweep's metrics at the
// sweep's points only.
func appliesTo(metric string, p *result.Point) bool {
	if isProbe(p) {
		return false
	}
	return plan.IsSearchMetric(metric) == isSearched(p)
}

// searches are the checks of the searches themselves: each found a load
// meeting its condition, or fails on the data ("no load in [1, 64] meets
// p99 < 50ms", exit 1). A search that every load of its range passed
// passes, saying the answer may lie beyond the range.
func searches(run *result.Run) []Check {
	var out []Check
	for i := range run.Points {
		p := &run.Points[i]
		s := p.Searched
		if !isSearched(p) || s == nil {
			continue
		}
		metric := plan.MetricMaxConcurrency
		if p.Summary.MaxRequestRate != nil {
			metric = plan.MetricMaxRequestRate
		}
		mi, _ := plan.LookupMetric(metric)
		c := Check{Kind: KindSearch, Key: KeySearch, Name: "search " + p.Coords["search"], Model: p.Model, Point: p.ID,
			Metric: metric, Unit: mi.Unit, Value: s.Value, Status: StatusPass, Message: s.Message}
		switch {
		case !s.Found && len(s.Probes) == 0:
			c.Status, c.NoValue, c.Environment = StatusFail, true, true
			c.Message = "could not measure: no probe of the search was measured"
		case !s.Found:
			// Nothing met the condition, and the first load probed (the
			// range's start) decides why: a load that missed it is a
			// result on the data; one that could not be measured or did
			// not stabilize is the environment's (exit 3); one whose
			// interval straddled the bound is undecided (exit 4).
			switch first := s.Probes[0]; first.Outcome {
			case result.ProbeFailed, result.ProbeUnstable, result.ProbeDisturbed:
				c.Status, c.Environment = StatusFail, true
				c.Message = fmt.Sprintf("could not measure: the first load probed, %g, %s; %s", first.Level, unmeasured(first), s.Message)
				if first.Disturbance != "" {
					// The machine, not the build, kept the search from
					// an answer: say what answers on such a runner.
					c.Message += "; " + busyrule.ABAdvice
				}
			case result.ProbeInconclusive:
				c.Status = StatusInconclusive
				c.Message = fmt.Sprintf("inconclusive: the first load probed, %g, could not be shown to meet or miss %s after its extra trials; %s", first.Level, s.Condition, s.Message)
			default:
				c.Status = StatusFail
			}
		case s.AllMet:
			c.Status = StatusWarn
		}
		if s.Found {
			// A load above the value found that could not be judged leaves
			// the true answer open upwards: name it rather than let the
			// last level that met stand silently.
			if pr, ok := searchDoubt(p, "<=", math.Inf(1)); ok {
				w := fmt.Sprintf("the answer may be higher: %s", doubtText(s, pr))
				c.Warnings = append(c.Warnings, w)
				c.Message += "; " + w
			}
		}
		out = append(out, c)
	}
	return out
}

// unjudgedStart is the first probe of a search that found nothing when
// that probe was neither met nor missed (not measured, not stable,
// undecided, or stopped on a disturbed machine): the search then knows
// nothing of its answer, and a bound on its value is not missed on the
// data either.
func unjudgedStart(p *result.Point) (result.Probe, bool) {
	s := p.Searched
	if !isSearched(p) || s == nil || s.Found || len(s.Probes) == 0 {
		return result.Probe{}, false
	}
	if pr := s.Probes[0]; pr.Unjudged() {
		return pr, true
	}
	return result.Probe{}, false
}

// unknownAnswer makes a failed check of a search's value (a threshold or
// a baseline check) what the search itself is when its first probe could
// not be judged: could not measure (exit 3), or inconclusive (exit 4).
func unknownAnswer(c *Check, p *result.Point) bool {
	pr, ok := unjudgedStart(p)
	if !ok {
		return false
	}
	if pr.Outcome == result.ProbeInconclusive {
		c.Status = StatusInconclusive
		c.Message = fmt.Sprintf("inconclusive: the search's first load, %g, was neither shown to meet nor to miss %s, so its answer is unknown; %s", pr.Level, p.Searched.Condition, c.Message)
	} else {
		c.Status, c.Environment = StatusFail, true
		c.Message = fmt.Sprintf("could not measure: the search's first load, %g, %s, so its answer is unknown; %s", pr.Level, unmeasured(pr), c.Message)
	}
	return true
}

// unmeasured says why a probe has no judgement, with the contention that
// explains it where the machine was disturbed.
func unmeasured(pr result.Probe) string {
	what := "could not be measured"
	switch pr.Outcome {
	case result.ProbeUnstable:
		what = "did not stabilize"
	case result.ProbeDisturbed:
		what = "was stopped by abort_on while the machine was disturbed"
	}
	if pr.Disturbance != "" {
		what += " (" + pr.Disturbance + ")"
	}
	return what
}

// searchDoubt is, for a bound that the value a search found misses, the
// probe that leaves the answer open: a load above the value found whose
// condition was neither met nor decisively missed (its interval straddled
// the bound after every extra trial, it did not stabilize, it could not
// be measured, or abort_on stopped it while the machine was disturbed),
// below the lowest load that decisively missed it, and at which the bound
// would hold. The search counts such a probe as failing to
// stay on the safe side, but the highest load meeting the condition may be
// that probe's: a bound held to the value found is then undecided, not
// missed. Only a fails or an aborted probe is decisive.
func searchDoubt(p *result.Point, op string, bound float64) (result.Probe, bool) {
	s := p.Searched
	if !isSearched(p) || s == nil {
		return result.Probe{}, false
	}
	decisive := math.Inf(1)
	for _, pr := range s.Probes {
		if pr.Outcome == result.ProbeFails || pr.Outcome == result.ProbeAborted {
			decisive = min(decisive, pr.Level)
		}
	}
	var doubt result.Probe
	found := false
	for _, pr := range s.Probes {
		if !pr.Unjudged() {
			continue
		}
		if pr.Level > s.Value && pr.Level < decisive && plan.Holds(pr.Level, op, bound) && (!found || pr.Level < doubt.Level) {
			doubt, found = pr, true
		}
	}
	return doubt, found
}

// doubtText says why a bound on a search's value is undecided.
func doubtText(s *result.SearchOutcome, pr result.Probe) string {
	metric, unit := s.ConditionMetric()
	fig := "not measured"
	switch {
	case pr.Trials > 0 && pr.Confidence > 0:
		fig = fmt.Sprintf("%s %s, %.0f%% interval [%s, %s], %d trial(s)", metric, numfmt.Value(pr.Value, unit), 100*pr.Confidence,
			numfmt.Value(pr.Lo, unit), numfmt.Value(pr.Hi, unit), pr.Trials)
	case pr.Trials > 0:
		fig = fmt.Sprintf("%s %s, %d trial(s)", metric, numfmt.Value(pr.Value, unit), pr.Trials)
	}
	what := pr.Outcome
	if pr.Outcome == result.ProbeDisturbed {
		what = "stopped by abort_on while the machine was disturbed"
	}
	if pr.Disturbance != "" {
		fig = pr.Disturbance + "; " + fig
	}
	return fmt.Sprintf("the probe at %g was %s (%s), so the highest load meeting %s may be %g", pr.Level, what, fig, s.Condition, pr.Level)
}

// doubted turns a baseline check of a search's value that regressed into
// an undecided one when a probe the search could not judge would meet the
// check's bound (searchDoubt).
func doubted(c *Check, run *result.Run) {
	if c.Kind != KindBaseline || c.Class != ClassRegressed {
		return
	}
	for i := range run.Points {
		p := &run.Points[i]
		if p.ID != c.Point {
			continue
		}
		if unknownAnswer(c, p) {
			c.Class = ClassUndecided
			if c.Environment {
				c.Class = ClassUnstable
			}
			continue
		}
		if pr, ok := searchDoubt(p, c.Op, c.Bound); ok {
			c.Class, c.Status = ClassUndecided, StatusInconclusive
			c.Message = fmt.Sprintf("inconclusive: %s; %s", doubtText(p.Searched, pr), c.Message)
		}
	}
}

// aborted fails a point of the sweep that an abort_on condition stopped:
// a hopeless load is a result on the data, not a broken testbed.
func aborted(p *result.Point) (Check, bool) {
	if p.Status != result.PointAborted || isProbe(p) {
		return Check{}, false
	}
	msg := "stopped by abort_on"
	for _, n := range p.Notes {
		if len(n) > 8 && n[:8] == "aborted " {
			msg = n
		}
	}
	return Check{Kind: KindAbort, Key: KeyAborted, Name: "abort_on", Model: p.Model, Point: p.ID,
		Status: StatusFail, NoValue: true, Message: fmt.Sprintf("%s; the run stopped there", msg)}, true
}

// compareSearched decides a comparison of two search figures: each is one
// value found by its search, with no trials to test, so the ratio is held
// to the bound as it is.
func compareSearched(cmp plan.Comparison, b bound, cand, ref *result.Point) Check {
	c := Check{Kind: KindComparison, Name: comparisonName(cmp, b), Model: cand.Model, Point: cand.ID, RefPoint: ref.ID,
		Metric: cmp.Metric, Unit: "ratio", Bound: b.ratio, Op: b.op, Method: "searched-values", Status: StatusFail}
	cv, cok := cand.Summary.Value(cmp.Metric)
	rv, rok := ref.Summary.Value(cmp.Metric)
	switch {
	case !cok || !rok:
		c.NoValue = true
		c.Message = fmt.Sprintf("%s has no value at both %s and %s", cmp.Metric, cand.ID, ref.ID)
		return c
	case rv <= 0:
		c.NoValue = true
		c.Message = fmt.Sprintf("the reference %s found no load (%s 0); no ratio to judge", ref.ID, cmp.Metric)
		return c
	}
	c.Value = cv / rv
	c.Effect = c.Value - 1
	ok := plan.Holds(c.Value, b.op, b.ratio)
	if ok {
		c.Status = StatusPass
	}
	c.Message = fmt.Sprintf("%s %g vs %g: ratio %.3f %s %g", cmp.Metric, cv, rv, c.Value, map[bool]string{true: "meets", false: "misses"}[ok], b.ratio)
	return c
}
