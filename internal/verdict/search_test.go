package verdict

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// searched is a search's result point that found v (0: nothing).
func searched(model, name string, v float64, found, allMet bool) result.Point {
	p := result.Point{ID: model + "/" + name, Model: model, ModelName: model, Status: result.PointSearched,
		Mode: plan.LoadConcurrency, Coords: map[string]string{"search": name}}
	p.Summary.MaxConcurrency = &v
	p.Searched = &result.SearchOutcome{Condition: "p99 < 50ms", Method: "binary", Decide: "interval", Start: 1, End: 64, Step: 1,
		Found: found, Value: v, AllMet: allMet, Probes: []result.Probe{{Level: 1, Outcome: result.ProbeMeets}},
		Message: "as found"}
	if !found {
		p.Searched.Message = "no load in [1, 64] meets p99 < 50ms"
	}
	return p
}

// probe is a search's probe: overloaded, unstable, failing requests; none
// of it is the sweep's business.
func probe(model, name string, lvl int) result.Point {
	p := mkPoint(fmt.Sprintf("%s/%s/c=%d", model, name, lvl), model, map[string]string{"concurrency": fmt.Sprint(lvl), "search": name}, constant(5, 100, 900000))
	p.Search, p.Status = name, result.PointUnstable
	p.Errors = result.ErrorInfo{Count: 40}
	p.Summary.Errors, p.Summary.ErrorRate = 40, 0.5
	return p
}

func checksOf(cs []Check, kind Kind) []Check {
	var out []Check
	for _, c := range cs {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// A search that found a load passes; one that found none fails on the
// data with its message; every load meeting the bound warns that the
// answer may lie beyond the range. Probes are judged by the search alone:
// their instability and errors fail nothing, and the sweep's thresholds do
// not apply to them or to the search's figure.
func TestSearchChecks(t *testing.T) {
	const name = "max_concurrency@p99<50ms"
	run := mkRun(
		mkPoint("trt/c=1", "trt", c(1), constant(10, 1000, 20000)),
		probe("trt", name, 64),
		searched("trt", name, 16, true, false),
		searched("onnx", name, 0, false, false),
		searched("tf", name, 64, true, true),
	)
	ths := []plan.Threshold{
		{Text: "p99 < 1s", Metric: plan.MetricP99, Op: "<", Value: 1e6},
		{Text: name + " >= 16", Metric: plan.MetricMaxConcurrency, Op: ">=", Value: 16,
			Selector: plan.Selector{Models: []string{"trt", "onnx"}, At: map[string][]string{"search": {name}}}},
	}
	v := Options{}.Evaluate(plan.Checks{Thresholds: ths}, run, nil)
	byPoint := map[string]Status{}
	for _, c := range checksOf(v.Checks, KindSearch) {
		byPoint[c.Point] = c.Status
	}
	if byPoint["trt/"+name] != StatusPass || byPoint["onnx/"+name] != StatusFail || byPoint["tf/"+name] != StatusWarn {
		t.Errorf("search checks: %v", byPoint)
	}
	for _, c := range v.Checks {
		if c.Point == "trt/"+name+"/c=64" {
			t.Errorf("a probe was judged: %s %s: %s", c.Kind, c.Status, c.Message)
		}
	}
	ths0 := checksOf(v.Checks, KindThreshold)
	got := map[string]Status{}
	for _, c := range ths0 {
		got[c.Name+" @ "+c.Point] = c.Status
	}
	want := map[string]Status{
		"p99 < 1s @ trt/c=1":           StatusPass,
		name + " >= 16 @ trt/" + name:  StatusPass,
		name + " >= 16 @ onnx/" + name: StatusFail,
	}
	if len(got) != len(want) {
		t.Errorf("thresholds: %v", got)
	}
	for k, s := range want {
		if got[k] != s {
			t.Errorf("%s: %s, want %s (all: %v)", k, got[k], s, got)
		}
	}
	if v.Outcome() != OutcomeFail {
		t.Errorf("outcome %s", v.Outcome())
	}
}

const n = "max_concurrency@p99<50ms"

// "TensorRT sustains ≥ 1.5 × ONNX's max rate": two search figures are
// compared as the values found, with no trials to test.
func TestSearchComparison(t *testing.T) {
	run := mkRun(searched("trt", n, 24, true, false), searched("onnx", n, 12, true, false))
	cmp := []plan.Comparison{{Name: "trt-vs-onnx", Candidate: "trt", Reference: "onnx", Metric: plan.MetricMaxConcurrency, MinRatio: 1.5}}
	cs := Options{}.Comparisons(cmp, run)
	if len(cs) != 1 || cs[0].Status != StatusPass || cs[0].Value != 2 || !strings.Contains(cs[0].Message, "24 vs 12") {
		t.Fatalf("%+v", cs)
	}
	run = mkRun(searched("trt", n, 16, true, false), searched("onnx", n, 12, true, false))
	if cs = (Options{}).Comparisons(cmp, run); cs[0].Status != StatusFail {
		t.Errorf("16 vs 12 passed 1.5×: %+v", cs[0])
	}
	run = mkRun(searched("trt", n, 16, true, false), searched("onnx", n, 0, false, false))
	if cs = (Options{}).Comparisons(cmp, run); cs[0].Status != StatusFail || !cs[0].NoValue {
		t.Errorf("reference found nothing: %+v", cs[0])
	}
}

// The baseline gates a search on the value it found, whatever metrics the
// scenario lists for its sweep, and records neither the probes nor
// compares them: they differ from run to run as the answer moves.
func TestSearchBaseline(t *testing.T) {
	f := baseline.New("demo")
	for i := 0; i < 5; i++ {
		run := mkRun(searched("m", n, 24, true, false), probe("m", n, 64))
		run.RunID = "r" + string(rune('a'+i))
		if _, err := baseline.Update(f, run, baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	if ids := f.Testbeds["tb1"].PointIDs(); len(ids) != 1 || ids[0] != "m/"+n {
		t.Fatalf("history holds %v", ids)
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{plan.MetricThroughput, plan.MetricP99}}
	cases := []struct {
		v    float64
		want Status
	}{{24, StatusPass}, {16, StatusFail}, {30, StatusPass}}
	for _, tc := range cases {
		cs := (Options{}).Baseline(spec, f, mkRun(searched("m", n, tc.v, true, false), probe("m", n, 64)))
		if len(cs) != 1 || cs[0].Metric != plan.MetricMaxConcurrency || cs[0].Status != tc.want {
			t.Errorf("value %v: %+v", tc.v, cs)
		}
	}
}

// An abort_on stop fails the run on the data (exit 1), at the point.
func TestAbortedPointFails(t *testing.T) {
	p := mkPoint("m/c=64", "m", c(64), constant(1, 10, 900000))
	p.Status = result.PointAborted
	p.Notes = []string{"aborted at window 0: abort_on `p99 > 500ms`: p99 is 1.17e+03ms"}
	v := Options{}.Evaluate(plan.Checks{}, mkRun(p), nil)
	cs := checksOf(v.Checks, KindAbort)
	if len(cs) != 1 || cs[0].Status != StatusFail || cs[0].Environment || !strings.Contains(cs[0].Message, "abort_on `p99 > 500ms`") {
		t.Fatalf("%+v", v.Checks)
	}
	if len(checksOf(v.Checks, KindStability)) != 0 {
		t.Errorf("an aborted point also failed stability: %+v", v.Checks)
	}
}

// withProbes gives a searched point the probes it measured.
func withProbes(p result.Point, probes ...result.Probe) result.Point {
	p.Searched.Probes = probes
	return p
}

// A bound held to a search's value is undecided, not missed, when a load
// above the value found could not be judged (its interval straddled the
// condition's bound) and would meet it: on a busy machine the p99 of
// concurrency 4 came out [45.1ms, 50.2ms] against p99 < 50ms, so the
// highest concurrency meeting it is 3 or 4. A load the search judged
// decisively (fails, aborted), or a doubt the bound cannot reach, leaves
// the check failed.
func TestSearchThresholdDoubt(t *testing.T) {
	meets := func(l float64) result.Probe { return result.Probe{Level: l, Outcome: result.ProbeMeets, Trials: 6} }
	fails := func(l float64) result.Probe { return result.Probe{Level: l, Outcome: result.ProbeFails, Trials: 6} }
	open := func(l float64, outcome string) result.Probe {
		return result.Probe{Level: l, Outcome: outcome, Value: 48.77, Lo: 45.08, Hi: 50.24, Confidence: 0.97, Trials: 26}
	}
	cases := []struct {
		name   string
		probes []result.Probe
		bound  float64
		want   Status
	}{
		{"inconclusive probe at the bound", []result.Probe{meets(2), meets(3), open(4, result.ProbeInconclusive), fails(8)}, 4, StatusInconclusive},
		{"unstable probe above the bound", []result.Probe{meets(3), open(6, result.ProbeUnstable), fails(8)}, 4, StatusInconclusive},
		{"unmeasured probe above the bound", []result.Probe{meets(3), {Level: 6, Outcome: result.ProbeFailed}, fails(8)}, 4, StatusInconclusive},
		{"decisive failure at the bound", []result.Probe{meets(3), fails(4), open(6, result.ProbeInconclusive)}, 4, StatusFail},
		{"aborted at the bound", []result.Probe{meets(3), {Level: 4, Outcome: result.ProbeAborted, Trials: 1}}, 4, StatusFail},
		// abort_on stopped it while the machine was too busy: not the
		// build's doing, so the answer may be 4 (it was exit 1 and 3).
		{"aborted on a disturbed machine at the bound", []result.Probe{meets(1), {Level: 32, Outcome: result.ProbeAborted, Trials: 2}, fails(16), fails(8),
			{Level: 4, Outcome: result.ProbeDisturbed, Value: 47700, Trials: 7, Disturbance: "the machine was too busy: load average 15.2 on 2 CPUs"}, meets(2), meets(3)}, 4, StatusInconclusive},
		{"doubt below the bound", []result.Probe{meets(3), open(4, result.ProbeInconclusive), fails(5)}, 5, StatusFail},
		{"no doubt", []result.Probe{meets(3), fails(4)}, 4, StatusFail},
		{"value meets the bound", []result.Probe{meets(4), open(5, result.ProbeInconclusive)}, 4, StatusPass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			found := 3.0
			if tc.want == StatusPass {
				found = 4
			}
			run := mkRun(withProbes(searched("m", n, found, true, false), tc.probes...))
			th := plan.Threshold{Metric: plan.MetricMaxConcurrency, Op: ">=", Value: tc.bound}
			cs := Thresholds([]plan.Threshold{th}, run)
			if len(cs) != 1 || cs[0].Status != tc.want {
				t.Fatalf("checks %+v, want %s", cs, tc.want)
			}
			if tc.want == StatusInconclusive && !strings.Contains(cs[0].Message, "may be") {
				t.Errorf("message %q does not say what the value may be", cs[0].Message)
			}
		})
	}
}

// The same doubt holds for the baseline gate of a search's value: a found
// value one step below the history, with the load above it undecided, is
// no demonstrated regression.
func TestSearchBaselineDoubt(t *testing.T) {
	f := baseline.New("demo")
	for i := 0; i < 5; i++ {
		run := mkRun(searched("m", n, 24, true, false))
		run.RunID = "r" + string(rune('a'+i))
		if _, err := baseline.Update(f, run, baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{plan.MetricThroughput}}
	inconclusive := result.Probe{Level: 24, Outcome: result.ProbeInconclusive, Value: 49, Lo: 47, Hi: 51, Confidence: 0.97, Trials: 26}
	for _, tc := range []struct {
		name  string
		probe result.Probe
		want  Status
	}{
		{"load above undecided", inconclusive, StatusInconclusive},
		{"load above failed", result.Probe{Level: 24, Outcome: result.ProbeFails, Trials: 6}, StatusFail},
	} {
		run := mkRun(withProbes(searched("m", n, 16, true, false), result.Probe{Level: 16, Outcome: result.ProbeMeets, Trials: 6}, tc.probe))
		cs := (Options{}).Baseline(spec, f, run)
		if len(cs) != 1 || cs[0].Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, cs, tc.want)
		}
	}
}

// A search whose first load could not be judged knows nothing of its
// answer: it and every bound on its value end as the probe did — could
// not measure (exit 3) or inconclusive (exit 4) — never as a regression
// (exit 1, before). A load above the value found that could not be
// judged is named, not left silent.
func TestSearchUnjudgedProbes(t *testing.T) {
	const name = "max_concurrency@p99<50ms"
	ths := []plan.Threshold{{Text: name + " >= 4", Metric: plan.MetricMaxConcurrency, Op: ">=", Value: 4,
		Selector: plan.Selector{At: map[string][]string{"search": {name}}}}}
	start := func(outcome string) result.Point {
		p := searched("trt", name, 0, false, false)
		p.Searched.Probes = []result.Probe{{Level: 1, Outcome: outcome, Trials: 5}}
		if outcome == result.ProbeDisturbed {
			p.Searched.Probes[0].Disturbance = "the machine was too busy: load average 15.2 on 2 CPUs"
		}
		return p
	}
	tests := []struct {
		outcome string
		want    Outcome
		text    string
	}{
		{result.ProbeFailed, OutcomeNotMeasured, "could not measure: the first load probed, 1, could not be measured"},
		{result.ProbeUnstable, OutcomeNotMeasured, "could not measure: the first load probed, 1, did not stabilize"},
		{result.ProbeInconclusive, OutcomeInconclusive, "inconclusive: the first load probed, 1, could not be shown"},
		{result.ProbeDisturbed, OutcomeNotMeasured, "could not measure: the first load probed, 1, was stopped by abort_on while the machine was disturbed (the machine was too busy: load average 15.2 on 2 CPUs); " +
			"no load in [1, 64] meets p99 < 50ms; gate with a same-job A/B comparison instead"},
		{result.ProbeFails, OutcomeFail, "no load in [1, 64] meets"},
	}
	for _, tt := range tests {
		t.Run(tt.outcome, func(t *testing.T) {
			v := Options{}.Evaluate(plan.Checks{Thresholds: ths}, mkRun(start(tt.outcome)), nil)
			if got := v.Outcome(); got != tt.want {
				t.Errorf("outcome %s, want %s", got, tt.want)
			}
			s := checksOf(v.Checks, KindSearch)
			if len(s) != 1 || !strings.Contains(s[0].Message, tt.text) {
				t.Errorf("search check %+v, want a message containing %q", s, tt.text)
			}
			for _, c := range checksOf(v.Checks, KindThreshold) {
				if tt.want != OutcomeFail && c.Status == StatusFail && !c.Environment {
					t.Errorf("threshold failed on the data: %s", c.Message)
				}
			}
		})
	}
	// Found 4; the probe at 6 could not be measured and 8 missed: the
	// answer may be 6 or 7, and the check says so.
	p := searched("trt", name, 4, true, false)
	p.Searched.Probes = []result.Probe{{Level: 1, Outcome: result.ProbeMeets}, {Level: 8, Outcome: result.ProbeFails},
		{Level: 4, Outcome: result.ProbeMeets}, {Level: 6, Outcome: result.ProbeFailed}}
	p.Searched.Failing = 6
	v := Options{}.Evaluate(plan.Checks{}, mkRun(p), nil)
	s := checksOf(v.Checks, KindSearch)
	if len(s) != 1 || len(s[0].Warnings) != 1 || !strings.Contains(s[0].Message, "the answer may be higher: the probe at 6 was failed (not measured)") {
		t.Errorf("a probe above the answer that was not measured is not named: %+v", s)
	}
}
