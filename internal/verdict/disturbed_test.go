package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
)

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
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 700, 28000, 0.02))
	tests := []struct {
		name   string
		share  float64
		recent bool // history with disturbance recorded
		status Status
		msg    string
	}{
		{"busier machine", 0.55, true, StatusInconclusive, "testbed disturbed (55% vs ≤5% CPU used by other processes"},
		{"as quiet as the history", 0.08, true, StatusFail, "vs history"},
		{"history without disturbance", 0.55, false, StatusFail, "vs history"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := quiet
			if !tt.recent {
				base = unknown
			}
			got := Baseline(spec, base, mkRun(busy(slow, tt.share)))[:1]
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
	got := Comparisons(cmp, mkRun(busy(cand, 0.05), busy(ref, 0.40)))[0]
	if len(got.Warnings) == 0 || !strings.Contains(got.Warnings[len(got.Warnings)-1], "arms disturbed unequally: other processes used 5% of the CPUs during the candidate's windows and 40%") {
		t.Fatalf("no imbalance warning: %+v", got.Warnings)
	}
	got = Comparisons(cmp, mkRun(busy(cand, 0.30), busy(ref, 0.35)))[0]
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
	if got := Baseline(spec, base, mkRun(slow))[0]; got.Status != StatusSkip {
		t.Fatalf("unstable point without allow_unstable: %s", got.Status)
	}
}
