package search

import (
	"fmt"
	"math"

	"github.com/perfscen/perfscen/internal/stats"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// GoodputShare is the condition metric of a goodput search: the share of
// a probe's requests that met every SLO (failed requests count as missed).
const GoodputShare = "goodput_share"

// verdict is how one measurement of a probe is judged.
type verdict struct {
	probe result.Probe
	// undecided: the interval straddles the bound; more trials may decide.
	undecided bool
}

// judge decides whether probe point p meets s's condition, holding its
// kept trials to the error budget (the largest share of failed requests,
// max_error_rate) as a sweep point is held: a load that fails more of its
// requests than that does not meet any condition, however fast the few
// that succeeded were.
func judge(s *plan.Search, p *result.Point, allowUnstable bool, budget float64) verdict {
	v := verdict{probe: result.Probe{Point: p.ID, Trials: len(p.Trials)}}
	switch p.Status {
	case result.PointFailed, result.PointPartial:
		v.probe.Outcome = result.ProbeFailed
		return v
	case result.PointAborted:
		v.probe.Outcome = result.ProbeAborted
		v.probe.Value = shown(s, p)
		return v
	case result.PointUnstable:
		if !allowUnstable {
			v.probe.Outcome = result.ProbeUnstable
			v.probe.Value = shown(s, p)
			return v
		}
	}
	if len(p.Trials) > 0 {
		figs := p.FigureMetrics()
		v.probe.ErrorRate = figs.ErrorRate
		switch {
		case figs.Requests == 0 && figs.Errors > 0:
			// Nothing succeeded: there is no figure to judge, only a
			// server that refused the load (the sweep's rule too).
			v.probe.Outcome = result.ProbeFailed
			return v
		case figs.ErrorRate > budget:
			v.probe.Outcome, v.probe.OverBudget = result.ProbeFails, true
			if s.Decide == plan.DecideMerged {
				v.probe.Value, _ = mergedValue(s, p)
			} else if vals := trialValues(s, p); len(vals) > 0 {
				v.probe.Value = stats.Median(vals)
			}
			return v
		}
	}
	if s.Decide == plan.DecideMerged {
		val, ok := mergedValue(s, p)
		v.probe.Value = val
		switch {
		case !ok:
			v.probe.Outcome = result.ProbeFailed
		case plan.Holds(val, s.Condition.Op, s.Condition.Value):
			v.probe.Outcome = result.ProbeMeets
		default:
			v.probe.Outcome = result.ProbeFails
		}
		return v
	}
	vals := trialValues(s, p)
	if len(vals) == 0 {
		v.probe.Outcome = result.ProbeFailed
		return v
	}
	lo, hi, cov := stats.MedianCI(vals, s.Confidence)
	v.probe.Value, v.probe.Lo, v.probe.Hi, v.probe.Confidence = stats.Median(vals), lo, hi, cov
	// The interval meets the bound when every value in it does; it fails
	// when none does. Which end decides depends on the direction.
	switch {
	case plan.Holds(lo, s.Condition.Op, s.Condition.Value) && plan.Holds(hi, s.Condition.Op, s.Condition.Value):
		v.probe.Outcome = result.ProbeMeets
	case !plan.Holds(lo, s.Condition.Op, s.Condition.Value) && !plan.Holds(hi, s.Condition.Op, s.Condition.Value):
		v.probe.Outcome = result.ProbeFails
	default:
		v.probe.Outcome, v.undecided = result.ProbeInconclusive, true
	}
	return v
}

// shown is the figure a probe that is not judged on its data (aborted,
// unstable) reports: the one the search would have judged, which is what
// the report's tables show for its point, the median over its kept
// trials (their merge when the search decides on it, or when it kept
// none). The pooled figure beside a table's median was two numbers for
// one probe.
func shown(s *plan.Search, p *result.Point) float64 {
	if s.Decide != plan.DecideMerged {
		if vals := trialValues(s, p); len(vals) > 0 {
			return stats.Median(vals)
		}
	}
	v, _ := mergedValue(s, p)
	return v
}

// trialValues are the condition metric's value in each kept trial with
// data.
func trialValues(s *plan.Search, p *result.Point) []float64 {
	var out []float64
	for i := range p.Trials {
		t := &p.Trials[i]
		if s.Condition.Metric == GoodputShare {
			if v, ok := goodputShare(s, t); ok {
				out = append(out, v)
			}
			continue
		}
		if t.Metrics.Requests == 0 && t.Metrics.Errors == 0 {
			continue
		}
		if v, ok := t.Metrics.Value(s.Condition.Metric); ok {
			out = append(out, v)
		}
	}
	return out
}

// mergedValue is the condition metric over the kept trials merged, as
// perf_analyzer judges its latency threshold on the merged windows.
func mergedValue(s *plan.Search, p *result.Point) (float64, bool) {
	if s.Condition.Metric == GoodputShare {
		var good, sent float64
		for i := range p.Trials {
			t := &p.Trials[i]
			if v, ok := goodputShare(s, t); ok {
				n := float64(t.Metrics.Requests + t.Metrics.Errors)
				good += v * n
				sent += n
			}
		}
		if sent == 0 {
			return 0, false
		}
		return good / sent, true
	}
	if p.Summary.Requests == 0 && p.Summary.Errors == 0 {
		return 0, false
	}
	return p.Summary.Value(s.Condition.Metric)
}

// goodputShare is a trial's share of requests that met every SLO: for an
// LLM its goodput (requests meeting the TTFT/ITL/latency SLOs per second)
// times the window over the requests sent; otherwise the share finished
// within the search's latency SLO, from the trial's histogram.
func goodputShare(s *plan.Search, t *result.Trial) (float64, bool) {
	sent := t.Metrics.Requests + t.Metrics.Errors
	if sent == 0 {
		return 0, false
	}
	if l := t.Metrics.LLM; l != nil && l.Goodput != nil {
		return math.Min(*l.Goodput*t.Duration.Seconds()/float64(sent), 1), true
	}
	if s.SLOLatencyUs <= 0 {
		return 0, false
	}
	return t.ShareWithin(s.SLOLatencyUs)
}

// describe renders a probe's judgement for messages.
func describe(s *plan.Search, pr result.Probe) string {
	switch pr.Outcome {
	case result.ProbeFailed:
		return withDisturbance("could not be measured", pr)
	case result.ProbeUnstable:
		return withDisturbance("did not stabilize", pr)
	case result.ProbeAborted:
		return "stopped by abort_on"
	case result.ProbeDisturbed:
		return withDisturbance("stopped by abort_on while the machine was disturbed", pr)
	}
	if pr.OverBudget {
		return fmt.Sprintf("%.2f%% of its requests failed, over the error budget", 100*pr.ErrorRate)
	}
	val := formatValue(s.Condition.Metric, pr.Value)
	if s.Decide == plan.DecideMerged || pr.Confidence == 0 {
		return fmt.Sprintf("%s %s", s.Condition.Metric, val)
	}
	return fmt.Sprintf("%s %s, %.0f%% interval [%s, %s]", s.Condition.Metric, val, 100*pr.Confidence,
		formatValue(s.Condition.Metric, pr.Lo), formatValue(s.Condition.Metric, pr.Hi))
}

// withDisturbance adds to what a probe was the contention that leaves it
// unjudged.
func withDisturbance(what string, pr result.Probe) string {
	if pr.Disturbance == "" {
		return what
	}
	return what + " (" + pr.Disturbance + ")"
}

func formatValue(metric string, v float64) string {
	if metric == GoodputShare || metric == plan.MetricErrorRate {
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	if mi, ok := plan.LookupMetric(metric); ok && mi.Unit == "us" {
		if v >= 1000 {
			return fmt.Sprintf("%.2fms", v/1000)
		}
		return fmt.Sprintf("%.0fus", v)
	}
	return fmt.Sprintf("%.4g", v)
}
