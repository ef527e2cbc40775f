package search

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// model answers a probe: the p99 (µs) of each of its trials at level v
// (trial k of the probe, counting extra ones).
type model func(v float64, k int) float64

// drive plays the engine: it measures what the controller asks, with
// trials from m, until the controller is done, and returns the run with
// the search's point attached and the levels probed.
func drive(t *testing.T, pl *plan.Plan, m model, trials int) (*result.Run, []float64) {
	t.Helper()
	c := New(pl)
	run := &result.Run{}
	var levels []float64
	for step := 0; step < 200; step++ {
		next := c.Next(run)
		switch {
		case next.Point != nil:
			lvl := float64(next.Point.Load.Concurrency)
			if next.Point.Load.Mode == plan.LoadRequestRate {
				lvl = next.Point.Load.Rate
			}
			levels = append(levels, lvl)
			p := result.Point{ID: next.Point.ID, Model: next.Point.Model, Search: next.Point.Search, Status: result.PointStable}
			addTrials(&p, m, lvl, trials)
			run.Points = append(run.Points, p)
		case next.More != "":
			p := find(run, next.More)
			lvl := levels[len(levels)-1]
			addTrials(p, m, lvl, next.Trials)
		default:
			return c.Attach(run), levels
		}
	}
	t.Fatal("the search did not end")
	return nil, nil
}

func addTrials(p *result.Point, m model, lvl float64, n int) {
	for i := 0; i < n; i++ {
		v := m(lvl, len(p.Trials))
		p.Trials = append(p.Trials, result.Trial{Index: len(p.Trials), Duration: time.Second,
			Metrics: result.Metrics{Requests: 100, P99Us: v, P50Us: v, LatencyAvgUs: v}})
	}
	p.Summary = p.Trials[len(p.Trials)-1].Metrics
	p.Summary.Requests = int64(100 * len(p.Trials))
}

func searchPlan(method, decide string, start, end, step float64, cond string, bound float64) *plan.Plan {
	return &plan.Plan{
		Models:      []plan.Model{{Alias: "m", Name: "delay"}},
		Measurement: plan.Measurement{Trials: 5},
		Searches: []plan.Search{{
			Name: "max_concurrency@" + cond, Model: "m", Metric: plan.MetricMaxConcurrency,
			Start: start, End: end, Step: step, Method: method, Decide: decide, Confidence: 0.95, MaxExtraTrials: 10,
			Condition: plan.Threshold{Text: cond, Metric: plan.MetricP99, Op: "<", Value: bound},
			Template:  plan.Point{ID: "m/c=1", Model: "m", BatchSize: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}, Coords: map[string]string{}},
		}},
	}
}

func outcome(t *testing.T, run *result.Run) *result.SearchOutcome {
	t.Helper()
	for _, p := range run.Points {
		if p.Status == result.PointSearched {
			return p.Searched
		}
	}
	t.Fatal("no search point")
	return nil
}

// queue is a single-instance server: at concurrency c every request waits
// for c service times of 10 ms.
func queue(v float64, _ int) float64 { return v * 10000 }

func TestBinarySearchFindsTheBound(t *testing.T) {
	for _, decide := range []string{plan.DecideInterval, plan.DecideMerged} {
		run, levels := drive(t, searchPlan(plan.SearchBinary, decide, 1, 16, 1, "p99<45ms", 45000), queue, 5)
		o := outcome(t, run)
		if !o.Found || o.Value != 4 || o.Failing != 5 || o.AllMet || fmt.Sprint(levels) != "[1 16 8 4 6 5]" {
			t.Errorf("%s: %+v after %v", decide, o, levels)
		}
		if !strings.HasPrefix(o.Message, "concurrency 4 meets p99<45ms") || !strings.Contains(o.Message, "5 does not") {
			t.Errorf("message: %s", o.Message)
		}
		pt := run.Points[len(run.Points)-1]
		if v, ok := pt.Summary.Value(plan.MetricMaxConcurrency); !ok || v != 4 || pt.ID != "m/max_concurrency@p99<45ms" {
			t.Errorf("search point %s: %v %v", pt.ID, v, ok)
		}
	}
}

// perf_analyzer's step is the precision: the bisection stops when the
// bracket is no wider, so the answer is within a step of the bound.
func TestBinarySearchStepIsPrecision(t *testing.T) {
	run, levels := drive(t, searchPlan(plan.SearchBinary, plan.DecideMerged, 8, 128, 8, "p99<450ms", 450000), queue, 3)
	o := outcome(t, run)
	if o.Value != 38 || o.Failing != 45 || fmt.Sprint(levels) != "[8 128 68 38 53 45]" {
		t.Errorf("%+v after %v", o, levels)
	}
}

func TestSearchEnds(t *testing.T) {
	run, levels := drive(t, searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 16, 1, "p99<5ms", 5000), queue, 5)
	if o := outcome(t, run); o.Found || o.Value != 0 || fmt.Sprint(levels) != "[1]" ||
		!strings.HasPrefix(o.Message, "no load in [1, 16] meets p99<5ms (at 1: p99 10.00ms") {
		t.Errorf("none meets: %+v after %v", o, levels)
	}
	run, levels = drive(t, searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 16, 1, "p99<1s", 1e6), queue, 5)
	if o := outcome(t, run); !o.Found || !o.AllMet || o.Value != 16 || fmt.Sprint(levels) != "[1 16]" ||
		!strings.HasPrefix(o.Message, "every load in [1, 16] meets p99<1s") {
		t.Errorf("all meet: %+v after %v", o, levels)
	}
	run, levels = drive(t, searchPlan(plan.SearchLinear, plan.DecideMerged, 1, 8, 1, "p99<45ms", 45000), queue, 3)
	if o := outcome(t, run); o.Value != 4 || o.Failing != 5 || fmt.Sprint(levels) != "[1 2 3 4 5]" {
		t.Errorf("linear: %+v after %v", o, levels)
	}
	run, levels = drive(t, searchPlan(plan.SearchLinear, plan.DecideMerged, 2, 0, 2, "p99<45ms", 45000), queue, 3)
	if o := outcome(t, run); o.Value != 4 || fmt.Sprint(levels) != "[2 4 6]" || !strings.Contains(o.Message, "6 does not") {
		t.Errorf("linear without end: %+v after %v", o, levels)
	}
}

// A level whose trials straddle the bound gets more trials, up to the
// budget; still undecided, it counts as failing (a level is under the
// bound only when its interval is), where the merged figure alone would
// have passed it.
func TestNoisyProbeNeedsItsInterval(t *testing.T) {
	noisy := func(v float64, k int) float64 {
		if v == 4 {
			return []float64{38000, 47000, 40000, 46000, 41000}[k%5] // median 41 ms, straddles 45 ms
		}
		return queue(v, k)
	}
	pl := searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 16, 1, "p99<45ms", 45000)
	run, levels := drive(t, pl, noisy, 5)
	o := outcome(t, run)
	if o.Value != 3 || o.Failing != 4 || fmt.Sprint(levels) != "[1 16 8 4 2 3]" {
		t.Fatalf("%+v after %v", o, levels)
	}
	var at4 result.Probe
	for _, pr := range o.Probes {
		if pr.Level == 4 {
			at4 = pr
		}
	}
	if at4.Outcome != result.ProbeInconclusive || at4.Trials != 15 || at4.Lo >= 45000 || at4.Hi <= 45000 {
		t.Errorf("probe at 4: %+v, want inconclusive after 5 + 10 trials", at4)
	}
	pt := find(run, "m/max_concurrency@p99<45ms/c=4")
	if len(pt.Trials) != 15 {
		t.Errorf("probe at 4 has %d trials", len(pt.Trials))
	}
}

// Unstable and aborted probes fail; with allow_unstable an unstable one is
// judged on its trials.
func TestProbeStatuses(t *testing.T) {
	s := &searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 4, 1, "p99<45ms", 45000).Searches[0]
	p := &result.Point{Status: result.PointUnstable}
	addTrials(p, queue, 1, 5)
	if v := judge(s, p, false, 0); v.probe.Outcome != result.ProbeUnstable {
		t.Errorf("unstable: %+v", v.probe)
	}
	if v := judge(s, p, true, 0); v.probe.Outcome != result.ProbeMeets {
		t.Errorf("unstable, allowed: %+v", v.probe)
	}
	p.Status = result.PointAborted
	if v := judge(s, p, true, 0); v.probe.Outcome != result.ProbeAborted {
		t.Errorf("aborted: %+v", v.probe)
	}
	// Probes that are not judged show the figure the tables show for
	// their point: the median of the kept trials (their merge when the
	// search decides on it), not the pooled figure beside it.
	noisy := &result.Point{Status: result.PointAborted}
	addTrials(noisy, func(_ float64, k int) float64 { return []float64{40000, 47740, 54110}[k%3] }, 4, 3)
	noisy.Summary.P99Us = 54110
	for _, st := range []string{result.PointAborted, result.PointUnstable} {
		noisy.Status = st
		fig, _ := noisy.Figure(plan.MetricP99)
		if v := judge(s, noisy, false, 0); v.probe.Value != 47740 || fig.Value != 47740 {
			t.Errorf("%s probe shows p99 %v, its point's figure is %v; want the median 47740", st, v.probe.Value, fig.Value)
		}
		merged := *s
		merged.Decide = plan.DecideMerged
		if v := judge(&merged, noisy, false, 0); v.probe.Value != 54110 {
			t.Errorf("%s probe of a merged search shows %v, want the merge 54110", st, v.probe.Value)
		}
	}
	p.Status = result.PointFailed
	if v := judge(s, p, true, 0); v.probe.Outcome != result.ProbeFailed {
		t.Errorf("failed: %+v", v.probe)
	}
}

// A goodput search counts, per trial, the requests that finished within
// the SLO among all sent (failed ones missed it).
func TestGoodputShare(t *testing.T) {
	h := hdrhistogram.New(1, 3600e6, 3)
	for i := 0; i < 90; i++ {
		h.RecordValue(20000)
	}
	for i := 0; i < 10; i++ {
		h.RecordValue(80000)
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	tr := result.Trial{Histogram: string(enc), Duration: time.Second, Metrics: result.Metrics{Requests: 100, Errors: 20}}
	s := &plan.Search{SLOLatencyUs: 50000, Condition: plan.Threshold{Metric: GoodputShare, Op: ">=", Value: 0.7}}
	if v, ok := goodputShare(s, &tr); !ok || v != 0.75 {
		t.Errorf("share %v %v, want 90 good of 120 sent", v, ok)
	}
	good := 30.0
	llm := result.Trial{Duration: 2 * time.Second, Metrics: result.Metrics{Requests: 80, LLM: &result.LLMMetrics{Goodput: &good}}}
	if v, ok := goodputShare(s, &llm); !ok || v != 0.75 {
		t.Errorf("LLM share %v %v, want 60 good of 80", v, ok)
	}
}

// A probe is held to its model's error budget as a sweep point is: 100
// successes at p99 1 ms among 900 failures do not meet p99 < 45ms (they
// did before: errors were never judged), within a budget they do, and a
// probe where nothing succeeded could not be measured.
func TestProbeErrorBudget(t *testing.T) {
	pl := searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 4, 1, "p99<45ms", 45000)
	s := &pl.Searches[0]
	p := &result.Point{Status: result.PointStable}
	for i := 0; i < 5; i++ {
		p.Trials = append(p.Trials, result.Trial{Index: i, Duration: time.Second,
			Metrics: result.Metrics{Requests: 20, Errors: 180, ErrorRate: 0.9, P99Us: 1000, P50Us: 1000, LatencyAvgUs: 1000}})
	}
	for _, decide := range []string{plan.DecideInterval, plan.DecideMerged} {
		s.Decide = decide
		p.Summary = result.Metrics{Requests: 100, Errors: 900, ErrorRate: 0.9, P99Us: 1000, P50Us: 1000, LatencyAvgUs: 1000}
		v := judge(s, p, false, 0)
		if v.probe.Outcome != result.ProbeFails || !v.probe.OverBudget || v.probe.ErrorRate != 0.9 {
			t.Errorf("%s, budget 0: %+v", decide, v.probe)
		}
		if d := describe(s, v.probe); !strings.Contains(d, "90.00% of its requests failed, over the error budget") {
			t.Errorf("%s: described as %q", decide, d)
		}
		if v := judge(s, p, false, 0.95); v.probe.Outcome != result.ProbeMeets || v.probe.OverBudget {
			t.Errorf("%s, budget 95%%: %+v", decide, v.probe)
		}
	}
	none := &result.Point{Status: result.PointStable}
	for i := 0; i < 5; i++ {
		none.Trials = append(none.Trials, result.Trial{Index: i, Duration: time.Second, Metrics: result.Metrics{Errors: 50, ErrorRate: 1}})
	}
	if v := judge(s, none, false, 1); v.probe.Outcome != result.ProbeFailed {
		t.Errorf("nothing succeeded: %+v", v.probe)
	}
	// The controller takes the budget from the model, else the measurement.
	c := New(pl)
	if c.budget("m") != 0 {
		t.Errorf("default budget %g", c.budget("m"))
	}
	pl.Measurement.MaxErrorRate = 0.01
	if c.budget("m") != 0.01 {
		t.Errorf("measurement budget %g", c.budget("m"))
	}
	own := 0.5
	pl.Models[0].MaxErrorRate = &own
	if c.budget("m") != 0.5 {
		t.Errorf("model budget %g", c.budget("m"))
	}
}

// An unbounded linear concurrency search stops at the most a point may
// keep outstanding, and says so.
func TestUnboundedSearchStopsAtTheConcurrencyLimit(t *testing.T) {
	pl := searchPlan(plan.SearchLinear, plan.DecideInterval, plan.MaxConcurrency-1000, 0, 600, "p99<45ms", 45000)
	run, levels := drive(t, pl, func(float64, int) float64 { return 1000 }, 5)
	o := outcome(t, run)
	if fmt.Sprint(levels) != fmt.Sprint([]float64{plan.MaxConcurrency - 1000, plan.MaxConcurrency - 400}) || !o.Found || o.Value != plan.MaxConcurrency-400 {
		t.Fatalf("%+v after %v", o, levels)
	}
	if !strings.Contains(o.Message, "no concurrency above 65536 is probed") {
		t.Errorf("message %q", o.Message)
	}
}
