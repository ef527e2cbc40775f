package verdict

import (
	"fmt"

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
			c.Status = StatusFail
		case s.AllMet:
			c.Status = StatusWarn
		}
		out = append(out, c)
	}
	return out
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
