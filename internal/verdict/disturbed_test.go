package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// The disturbed rule: perfscen's own run-queue wait decides where both
// sides recorded it — it sees one more neighbour on a machine that is
// already full, and ignores neighbours perfscen did not feel — and the
// machine-wide signals decide only without it, each on its own margin.
func TestDisturbedBy(t *testing.T) {
	full := func(other, wait, press float64) baseline.Contention {
		return baseline.Contention{OtherCPU: other, HaveOtherCPU: true, Wait: wait, HaveWait: true, Pressure: press, HavePressure: true}
	}
	other := func(o float64) baseline.Contention { return baseline.Contention{OtherCPU: o, HaveOtherCPU: true} }
	pressure := func(o, p float64) baseline.Contention {
		return baseline.Contention{OtherCPU: o, HaveOtherCPU: true, Pressure: p, HavePressure: true}
	}
	const waitMsg = "perfscen's threads waited"
	tests := []struct {
		name      string
		now, most baseline.Contention
		cpus      int
		want      []string // substrings, one per reason, in order
	}{
		{"as busy as the history", full(0.30, 0.20, 0.40), full(0.30, 0.20, 0.40), 2, nil},
		{"a little busier on every signal", full(0.40, 0.35, 0.60), full(0.30, 0.20, 0.40), 2, nil},
		// Neighbours perfscen did not feel: its wait decides, not the
		// machine-wide figures (a half-idle 2-core machine, a c=1 client).
		{"neighbours busier, perfscen's wait alike", full(0.33, 0.05, 0.45), full(0.03, 0.04, 0.02), 2, nil},
		// The situation the CPU share cannot see: history on a full
		// machine, one more hog on top.
		{"full machine, one more hog", full(0.97, 1.10, 1), full(0.95, 0.60, 1), 2, []string{waitMsg + " 110% of their CPU time in the run queue vs ≤60%"}},
		{"wait within half as much again plus slack", full(0.97, 0.99, 1), full(0.95, 0.60, 1), 2, nil},
		{"near-zero history wait: slack keeps a few ms from counting", full(0.05, 0.09, 0.05), full(0.05, 0.01, 0.05), 2, nil},
		{"quiet history, a hog taking perfscen's CPU", full(0.52, 0.40, 0.55), full(0.04, 0.02, 0.05), 2, []string{waitMsg + " 40% of their CPU time in the run queue vs ≤2%"}},
		// Without the wait on both sides, the machine-wide signals decide.
		{"no wait: other processes a quarter of a core busier", other(0.43), other(0.30), 2, []string{"43% vs ≤30% CPU used by other processes"}},
		{"no wait: a quarter of a core is less of a 16-core machine", other(0.32), other(0.30), 16, []string{"32% vs ≤30% CPU used"}},
		{"no wait: unknown core count, 10 points", other(0.39), other(0.30), 0, nil},
		{"no wait: pressure alone", pressure(0.30, 0.70), pressure(0.30, 0.40), 2, []string{"CPU pressure 70% vs ≤40% of the time"}},
		{"no wait: both", pressure(0.52, 0.55), pressure(0.04, 0.05), 2, []string{"52% vs ≤4%", "CPU pressure 55% vs ≤5%"}},
		{"history without wait or pressure", full(0.30, 5, 1), other(0.30), 2, nil},
		{"run without wait (no schedstat here)", other(0.30), full(0.30, 0.01, 0.01), 2, nil},
		{"nothing recorded", baseline.Contention{}, baseline.Contention{}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DisturbedBy(tt.now, tt.most, tt.cpus)
			if len(got) != len(tt.want) {
				t.Fatalf("DisturbedBy = %q, want %d reason(s) %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// busy marks every trial of p as run while other processes used share of
// the machine's CPUs.
func busy(p result.Point, share float64) result.Point {
	for i := range p.Trials {
		p.Trials[i].Disturbance = &result.Disturbance{OtherCPU: share, Load1: 1}
	}
	return p
}

// A regression measured while the machine was markedly busier with other
// work than in every baseline run is "testbed disturbed", not a failure;
// the same regression on a machine as quiet as the history's fails, and a
// history that never recorded disturbance cannot excuse it.
func TestBaselineDisturbedTestbed(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}
	rng := rand.New(rand.NewPCG(11, 12))
	quiet := history(t, rng, 8, 0.01)
	unknown := history(t, rng, 8, 0.01)
	for _, r := range quiet.Testbeds["tb1"].Runs {
		for _, p := range r.Points {
			for i := range p.Trials {
				p.Trials[i].Disturbance = &result.Disturbance{OtherCPU: 0.04 + 0.01*float64(i%3)}
			}
		}
	}
	// A history recorded on a machine already full (other processes at
	// 95%), with perfscen's threads waiting 60% of their run time.
	crowded := history(t, rng, 8, 0.01)
	for _, r := range crowded.Testbeds["tb1"].Runs {
		for _, p := range r.Points {
			for i := range p.Trials {
				p.Trials[i].Disturbance = &result.Disturbance{OtherCPU: 0.95, RunQueueWait: new(0.6)}
			}
		}
	}
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 700, 28000, 0.02))
	tests := []struct {
		name   string
		share  float64
		wait   *float64
		base   *baseline.File
		status Status
		msg    string
	}{
		{"busier machine", 0.55, nil, quiet, StatusInconclusive, "testbed disturbed (55% vs ≤5% CPU used by other processes, against the 8 baseline run(s); the machine could account for 111.1% at most"},
		{"as quiet as the history", 0.08, nil, quiet, StatusFail, "vs history"},
		{"history without disturbance", 0.55, nil, unknown, StatusFail, "vs history"},
		{"full machine, one more hog", 0.96, new(1.4), crowded, StatusInconclusive, "testbed disturbed (perfscen's threads waited 140% of their CPU time in the run queue vs ≤60%, against the 8 baseline run(s); the machine could account for 50.0% at most"},
		{"full machine, as crowded as the history", 0.96, new(0.7), crowded, StatusFail, "vs history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := busy(slow, tt.share)
			for i := range p.Trials {
				p.Trials[i].Disturbance.RunQueueWait = tt.wait
			}
			got := Options{}.Baseline(spec, tt.base, mkRun(p))[:1]
			if got[0].Point != "a/c=1" || got[0].Status != tt.status || !strings.Contains(got[0].Message, tt.msg) {
				t.Fatalf("got %+v, want %s containing %q", got, tt.status, tt.msg)
			}
			if got[0].Disturbed != (tt.status == StatusInconclusive) {
				t.Errorf("Disturbed = %v", got[0].Disturbed)
			}
			v := &Verdict{Checks: got}
			if len(v.Undecided()) != 0 {
				t.Errorf("a disturbed or decided check asked for more trials: %v", v.Undecided())
			}
		})
	}
}

func TestComparisonArmImbalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	cmp := []plan.Comparison{{Candidate: "opt", Reference: "ref", Metric: "throughput", MinRatio: 1.1}}
	cand := mkPoint("opt/c=1", "opt", c(1), noisy(rng, 10, 1300, 1, 0.02))
	ref := mkPoint("ref/c=1", "ref", c(1), noisy(rng, 10, 1000, 1, 0.02))
	got := Options{}.Comparisons(cmp, mkRun(busy(cand, 0.05), busy(ref, 0.40)))[0]
	if len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], "arms disturbed unequally: other processes used 5% of the CPUs during the candidate's windows and 40%") {
		t.Fatalf("no imbalance warning: %+v", got.Warnings)
	}
	// On a full machine the CPU share is alike, but one arm's requests
	// met a longer run queue.
	waited := func(p result.Point, wait float64) result.Point {
		p = busy(p, 0.95)
		for i := range p.Trials {
			p.Trials[i].Disturbance.RunQueueWait = new(wait)
		}
		return p
	}
	got = Options{}.Comparisons(cmp, mkRun(waited(cand, 0.3), waited(ref, 1.2)))[0]
	if len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], "arms disturbed unequally: perfscen's threads waited 30% of their CPU time in the run queue during the candidate's windows and 120%") {
		t.Fatalf("no run-queue imbalance warning: %+v", got.Warnings)
	}
	got = Options{}.Comparisons(cmp, mkRun(busy(cand, 0.30), busy(ref, 0.35)))[0]
	for _, w := range got.Warnings {
		if strings.Contains(w, "disturbed") {
			t.Fatalf("alike arms warned: %s", w)
		}
	}
}

// With allow_unstable, a point that never stabilized is judged on its kept
// trials instead of being skipped: on a busy runner that is every point.
func TestBaselineJudgesUnstablePointsWhenAllowed(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}
	rng := rand.New(rand.NewPCG(15, 16))
	base := history(t, rng, 8, 0.01)
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 5, 700, 28000, 0.02))
	slow.Status = result.PointUnstable
	got := Options{AllowUnstable: true}.Baseline(spec, base, mkRun(slow))[0]
	if got.Status != StatusFail || len(got.Warnings) == 0 || !strings.Contains(got.Warnings[0], "judged on its 5 kept trial(s)") {
		t.Fatalf("allowed unstable point: %s %q %v", got.Status, got.Message, got.Warnings)
	}
	if got := (Options{}).Baseline(spec, base, mkRun(slow))[0]; got.Status != StatusSkip {
		t.Fatalf("unstable point without allow_unstable: %s", got.Status)
	}
}

// wakeups marks every trial of p with a wake-up delay distribution.
// A disturbance excuses only the change it can explain: a neighbour whose
// long wake-ups are rare lengthens the latency tail and moves the median
// and the throughput by little, so an unchanged build beside it does not
// fail, while a 10% or 2.3× slower model next to it does, whatever the
// tail did. The runs are the delay model's (machine_test.go).
func TestDisturbanceExplainsOnlyWhatItCan(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	service := normalService(10_000, 300)
	hist := simHistory(t, rng, 8, service, machine{base: 10})
	neighbour := machine{share: 0.02, long: 2500, base: 12}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p50", "p95", "p99"}}
	tests := []struct {
		name    string
		service func(*rand.Rand) float64
		outcome Outcome
		fail    []string // metrics that must fail
	}{
		{"neighbour moves the tail only", service, OutcomePass, nil},
		{"a 10% slower model next to the neighbour", normalService(11_000, 330), OutcomeFail, []string{"throughput", "p50"}},
		{"2.3x slower next to the neighbour", normalService(23_000, 690), OutcomeFail, []string{"throughput", "p50", "p95", "p99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Options{}.Baseline(spec, hist, mkRun(machinePoint(t, rng, 10, 1000, tt.service, neighbour)))
			o := (&Verdict{Checks: got}).Outcome()
			if o != tt.outcome && !(tt.outcome == OutcomePass && o == OutcomeInconclusive) {
				t.Errorf("outcome %s, want %s:\n%s", o, tt.outcome, describe(got))
			}
			for _, m := range tt.fail {
				if ch := find(got, m); ch == nil || ch.Status != StatusFail {
					t.Errorf("%s does not fail:\n%s", m, describe(got))
				}
			}
		})
	}
}

// The older signals bound an effect too: a run queue wait that went from
// 60% to 140% of perfscen's run time can stretch a CPU-bound path by half,
// not by 2.3 times (the TF Serving case: p50 +131% was "testbed
// disturbed" before).
func TestLegacyDisturbanceBoundsTheEffect(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p50"}}
	rng := rand.New(rand.NewPCG(23, 24))
	crowded := history(t, rng, 8, 0.01)
	for _, r := range crowded.Testbeds["tb1"].Runs {
		for _, p := range r.Points {
			for i := range p.Trials {
				p.Trials[i].Disturbance = &result.Disturbance{OtherCPU: 0.5, RunQueueWait: new(0.6)}
			}
		}
	}
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000/2.3, 20000*2.3, 0.02))
	for i := range slow.Trials {
		slow.Trials[i].Disturbance = &result.Disturbance{OtherCPU: 0.6, RunQueueWait: new(1.4)}
	}
	for _, ch := range (Options{}).Baseline(spec, crowded, mkRun(slow)) {
		if ch.Point != "a/c=1" {
			continue
		}
		if ch.Status != StatusFail || ch.Disturbed || len(ch.Warnings) == 0 || !strings.Contains(ch.Warnings[len(ch.Warnings)-1], "could account for 50.0% at most; this change is larger") {
			t.Errorf("%s: %s disturbed=%v %q %q; want a failure naming what the disturbance explains", ch.Metric, ch.Status, ch.Disturbed, ch.Message, ch.Warnings)
		}
	}
}

// A latency percentile of too few requests per trial is not gated: the
// p95 of 95 requests is the 5th-slowest, which one neighbour's wake-up
// decides. The same rise over trials of 1000 requests fails.
func TestThinTailIsNotGated(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"p50", "p95", "p99"}}
	rng := rand.New(rand.NewPCG(25, 26))
	base := history(t, rng, 8, 0.01)
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 28000, 0.01)) // +40% everywhere
	for _, tt := range []struct {
		requests int64
		want     map[string]Status
	}{
		{95, map[string]Status{"p50": StatusFail, "p95": StatusNotGated, "p99": StatusNotGated}},
		{250, map[string]Status{"p50": StatusFail, "p95": StatusFail, "p99": StatusNotGated}},
		{1000, map[string]Status{"p50": StatusFail, "p95": StatusFail, "p99": StatusFail}},
	} {
		p := slow
		p.Trials = append([]result.Trial(nil), slow.Trials...)
		for i := range p.Trials {
			p.Trials[i].Metrics.Requests = tt.requests
		}
		for _, ch := range (Options{}).Baseline(spec, base, mkRun(p)) {
			if ch.Point != "a/c=1" {
				continue
			}
			if ch.Status != tt.want[ch.Metric] {
				t.Errorf("%d requests a trial: %s %s, want %s: %s", tt.requests, ch.Metric, ch.Status, tt.want[ch.Metric], ch.Message)
			}
			if ch.Status == StatusNotGated && !strings.Contains(ch.Message, "requests a trial to gate (lengthen measurement.window)") {
				t.Errorf("%s: %s", ch.Metric, ch.Message)
			}
		}
	}
}
