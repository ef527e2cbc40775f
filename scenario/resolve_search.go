package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// searchSpec is a resolved search, before Expand gives it its template.
type searchSpec struct {
	name       string
	models     []string // aliases
	metric     string
	start, end float64
	step       float64
	method     string
	cond       plan.Threshold
	sloUs      float64
	decide     string
	confidence float64
	maxExtra   int
}

// Search defaults.
const (
	DefaultSearchConfidence = 0.95
	// DefaultSearchExtraTrials is how many trials a probe whose interval
	// straddles the bound may get on top of measurement.trials.
	DefaultSearchExtraTrials = 20
)

// goodputShare is a search condition's metric for goodput searches.
const goodputShare = "goodput_share"

// searchMetrics are the condition metrics a search can bound: lower-is-
// better latencies and error rate (op < or <=), and the goodput share
// (op > or >=).
func searchCondition(expr string) (plan.Threshold, error) {
	m := exprRE.FindStringSubmatch(expr)
	if m != nil && m[1] == goodputShare {
		op := m[2]
		if op != ">" && op != ">=" {
			return plan.Threshold{}, fmt.Errorf("%q: a goodput share is a floor; write goodput_share >= 95%%", expr)
		}
		v, err := ParsePercent(strings.TrimSpace(m[3]), false)
		if err != nil || v > 100 {
			return plan.Threshold{}, fmt.Errorf("%q: the floor is a percentage up to 100%% (e.g. 95%%)", expr)
		}
		return plan.Threshold{Text: strings.TrimSpace(expr), Metric: goodputShare, Op: op, Value: v / 100}, nil
	}
	th, err := ParseThreshold(expr)
	if err != nil {
		return th, err
	}
	mi, _ := plan.LookupMetric(th.Metric)
	switch {
	case plan.IsSearchMetric(th.Metric):
		return th, fmt.Errorf("%q: a search bounds a measured figure, not another search's", expr)
	case mi.HigherBetter:
		return th, fmt.Errorf("%q: a search looks for the highest load at which a figure stays under a bound; %s gets better as it rises (bound a latency, error_rate or goodput_share)", expr, th.Metric)
	case th.Op != "<" && th.Op != "<=":
		return th, fmt.Errorf("%q: a search keeps %s under a bound: use < or <=", expr, th.Metric)
	}
	return th, nil
}

// searchRange reads start:end[:step]; an end of 0 is perf_analyzer's "no
// end" (linear searches only).
func searchRange(s string, whole bool) (start, end, step float64, err error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, 0, fmt.Errorf("%q is not a range (start:end[:step], e.g. 1:64)", s)
	}
	nums := []float64{0, 0, 1}
	for i, p := range parts {
		v, perr := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, 0, 0, fmt.Errorf("%q is not a range (start:end[:step]): %q is not a non-negative number", s, p)
		}
		if whole && v != math.Trunc(v) {
			return 0, 0, 0, fmt.Errorf("range %q: concurrency levels are whole numbers", s)
		}
		nums[i] = v
	}
	start, end, step = nums[0], nums[1], nums[2]
	switch {
	case start <= 0:
		return 0, 0, 0, fmt.Errorf("range %q: start must be > 0", s)
	case step <= 0:
		return 0, 0, 0, fmt.Errorf("range %q: step must be > 0", s)
	case end != 0 && end < start:
		return 0, 0, 0, fmt.Errorf("range %q is empty: end %v is below start %v", s, end, start)
	}
	return start, end, step, nil
}

func resolveSearches(s *Scenario, c *collector, r *resolved) {
	aliases := map[string]bool{}
	var aliasList []string
	for _, m := range r.models {
		aliases[m.Alias] = true
		aliasList = append(aliasList, m.Alias)
	}
	names := map[string]bool{}
	for i, in := range s.Searches {
		p := path{"searches", i}
		sp := searchSpec{method: plan.SearchBinary, decide: plan.DecideInterval, confidence: DefaultSearchConfidence, maxExtra: DefaultSearchExtraTrials}
		ok := true
		rangeText, rangeKey := in.Concurrency, "concurrency"
		sp.metric = plan.MetricMaxConcurrency
		switch {
		case in.Concurrency != "" && in.RequestRate != "":
			c.at(p, "give the range of one load: concurrency or request_rate, not both")
			ok = false
		case in.RequestRate != "":
			rangeText, rangeKey, sp.metric = in.RequestRate, "request_rate", plan.MetricMaxRequestRate
		case in.Concurrency == "":
			c.at(p, "give the range searched: concurrency: \"1:64\" or request_rate: \"10:500:10\"")
			ok = false
		}
		if in.Method != "" {
			sp.method = in.Method
		}
		if rangeText != "" {
			var err error
			sp.start, sp.end, sp.step, err = searchRange(rangeText, rangeKey == "concurrency")
			switch {
			case err != nil:
				c.at(p.child(rangeKey), "%v", err)
				ok = false
			case sp.end == 0 && sp.method == plan.SearchBinary:
				c.at(p.child(rangeKey), "a binary search needs the end of its range (an end of 0 steps up without end: method linear)")
				ok = false
			case rangeKey == "concurrency" && max(sp.start, sp.end) > plan.MaxConcurrency:
				c.at(p.child(rangeKey), "range %q: %s", rangeText, concurrencyLimitText(int(min(max(sp.start, sp.end), math.MaxInt32))))
				ok = false
			}
		}
		if in.While == "" {
			c.at(p, "give the condition a load must meet: while: \"p99 < 50ms\" or while: \"goodput_share >= 95%%\"")
			ok = false
		} else if cond, err := searchCondition(in.While); err != nil {
			c.at(p.child("while"), "%v", err)
			ok = false
		} else {
			sp.cond = cond
		}
		if in.SLO != "" {
			d, err := ParseDuration(in.SLO)
			switch {
			case err != nil:
				c.at(p.child("slo"), "%v", err)
			case sp.cond.Metric != goodputShare:
				c.atKey(p.child("slo"), "applies only to a goodput_share search (the per-request latency that counts as good)")
			default:
				sp.sloUs = float64(d.Microseconds())
			}
		} else if ok && sp.cond.Metric == goodputShare && r.llm == nil {
			c.at(p, "a goodput_share search needs slo: the latency a request must finish within to count as good (LLM runs use llm.goodput)")
			ok = false
		}
		if in.Decide != "" {
			sp.decide = in.Decide
		}
		if in.Confidence != "" {
			v, err := ParsePercent(in.Confidence, false)
			if err != nil || v <= 0 || v >= 100 {
				c.at(p.child("confidence"), "a confidence level between 0%% and 100%% (e.g. 95%%)")
			} else {
				sp.confidence = v / 100
			}
		}
		if in.MaxExtraTrials != nil {
			sp.maxExtra = *in.MaxExtraTrials
		}
		if len(in.Models) == 0 {
			sp.models = aliasList
		}
		for j, m := range in.Models {
			a, msg := r.modelRef(m, aliases, aliasList)
			if msg != "" {
				c.at(p.child("models", j), "%s", msg)
				ok = false
			}
			sp.models = append(sp.models, a)
		}
		if !ok {
			continue
		}
		sp.name = in.Name
		if sp.name == "" {
			sp.name = sp.metric + "@" + strings.Join(strings.Fields(sp.cond.Text), "")
		}
		if names[sp.name] {
			c.at(p, "search `%s` is defined twice; give one a name", sp.name)
			continue
		}
		names[sp.name] = true
		if in.Threshold != "" {
			th, err := ParseThreshold(sp.metric + " " + in.Threshold)
			if err != nil {
				c.at(p.child("threshold"), "%q is not a bound on the value found (e.g. \">= 16\"): %v", in.Threshold, err)
			} else {
				th.Text = sp.name + " " + strings.TrimSpace(in.Threshold)
				th.Selector = plan.Selector{Models: sp.models, At: map[string][]string{CoordSearch: {sp.name}}}
				r.searchChecks = append(r.searchChecks, th)
			}
		}
		r.searches = append(r.searches, sp)
	}
}

// resolveStages reads load.stages: a ramp replaces the load's level and
// its sweep; each stage is a point whose every window is kept.
func resolveStages(s *Scenario, c *collector, r *resolved) {
	in := s.Load.Stages
	if len(in) == 0 {
		return
	}
	p := path{"load", "stages"}
	switch {
	case r.load.Mode == plan.LoadIterations:
		c.at(p, "stages ramp concurrency or a request rate; mode iterations has no level to ramp")
		return
	case len(s.Sweep.Concurrency) > 0 || len(s.Sweep.RequestRate) > 0:
		c.at(p, "stages set the load over time; remove sweep.concurrency and sweep.request_rate")
		return
	case s.Load.Concurrency != 0 || s.Load.RequestRate != 0:
		c.at(p, "stages set the load over time; remove load.concurrency and load.request_rate")
		return
	case s.Measurement.Mode == string(plan.CountWindows):
		c.at(p, "a stage lasts a time: use measurement.mode time_windows (the window is one step of a ramp)")
		return
	}
	prev := 0.0
	for i, st := range in {
		d, err := ParseDuration(st.Duration)
		if err != nil {
			c.at(p.child(i, "duration"), "%v", err)
			continue
		}
		if d <= 0 {
			c.at(p.child(i, "duration"), "must be above 0")
			continue
		}
		if r.load.Mode == plan.LoadConcurrency && st.Target != math.Trunc(st.Target) {
			c.at(p.child(i, "target"), "a concurrency is a whole number")
			continue
		}
		if r.load.Mode == plan.LoadConcurrency && st.Target > plan.MaxConcurrency {
			c.at(p.child(i, "target"), "%s", concurrencyLimitText(int(min(st.Target, math.MaxInt32))))
			continue
		}
		r.stages = append(r.stages, plan.Stage{Index: i + 1, Duration: d, From: prev, To: st.Target})
		prev = st.Target
	}
}

// resolveAbortOn reads abort_on: threshold expressions on what one window
// shows.
func resolveAbortOn(s *Scenario, c *collector, r *resolved) {
	for i, expr := range s.AbortOn {
		th, err := ParseThreshold(expr)
		if err != nil {
			c.at(path{"abort_on", i}, "%v", err)
			continue
		}
		if !windowMetric(th.Metric) {
			c.at(path{"abort_on", i}, "%q: abort_on judges one window; use throughput, latency_avg, p50, p90, p95, p99, latency_max, errors or error_rate", expr)
			continue
		}
		r.abortOn = append(r.abortOn, th)
	}
}

func windowMetric(m string) bool {
	switch m {
	case plan.MetricThroughput, plan.MetricLatencyAvg, plan.MetricP50, plan.MetricP90, plan.MetricP95, plan.MetricP99,
		plan.MetricLatencyMax, plan.MetricErrors, plan.MetricErrorRate:
		return true
	}
	return false
}
