package verdict

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func TestComparisons(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := noisy(rng, 10, 1000, 20000, 0.02)
	fast := noisy(rng, 10, 1300, 15000, 0.02)
	same := noisy(rng, 10, 1000, 20000, 0.02)
	few := noisy(rng, 5, 1300, 15000, 0.02)
	onBound := noisy(rng, 10, 1150, 17400, 0.02)
	tests := []struct {
		name    string
		cand    trialSet
		cmp     plan.Comparison
		status  Status
		message string
	}{
		{"clear win", fast, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusPass, "interval"},
		{"shown below", same, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusFail, "shown not >= 1.15"},
		{"on the bound", onBound, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusInconclusive, "about"},
		{"latency max ratio", fast, plan.Comparison{Metric: "p95", MaxRatio: 0.9}, StatusPass, ""},
		{"latency max ratio fails", same, plan.Comparison{Metric: "p95", MaxRatio: 0.9}, StatusFail, ""},
		{"too few trials", few, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusFail, "too few trials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := mkRun(mkPoint("opt/c=1", "opt", c(1), tt.cand), mkPoint("ref/c=1", "ref", c(1), ref))
			tt.cmp.Candidate, tt.cmp.Reference = "opt", "ref"
			got := Options{}.Comparisons([]plan.Comparison{tt.cmp}, run)
			if len(got) != 1 {
				t.Fatalf("got %d checks", len(got))
			}
			g := got[0]
			if g.Status != tt.status || !strings.Contains(g.Message, tt.message) {
				t.Errorf("got %s %q, want %s containing %q", g.Status, g.Message, tt.status, tt.message)
			}
			if g.Status == StatusPass && !(g.Lo <= g.Value && g.Value <= g.Hi) {
				t.Errorf("ratio %g outside its interval [%g, %g]", g.Value, g.Lo, g.Hi)
			}
		})
	}
}

func TestComparisonsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	run := mkRun(mkPoint("opt/c=1", "opt", c(1), noisy(rng, 10, 1100, 1, 0.03)), mkPoint("ref/c=1", "ref", c(1), noisy(rng, 10, 1000, 1, 0.03)))
	cmp := []plan.Comparison{{Candidate: "opt", Reference: "ref", Metric: "throughput", MinRatio: 1.0}}
	a, b := Options{}.Comparisons(cmp, run), Options{}.Comparisons(cmp, run)
	if a[0].Lo != b[0].Lo || a[0].Hi != b[0].Hi || a[0].P != b[0].P {
		t.Fatalf("not reproducible: %+v vs %+v", a[0], b[0])
	}
}

func TestComparisonsPairing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	run := mkRun(
		mkPoint("opt/c=1", "opt", c(1), noisy(rng, 10, 1300, 1, 0.01)),
		mkPoint("opt/c=2", "opt", c(2), noisy(rng, 10, 1300, 1, 0.01)),
		mkPoint("ref/c=1", "ref", c(1), noisy(rng, 10, 1000, 1, 0.01)),
	)
	cmp := plan.Comparison{Candidate: "opt", Reference: "ref", Metric: "throughput", MinRatio: 1.1}
	got := Options{}.Comparisons([]plan.Comparison{cmp}, run)
	if len(got) != 2 || got[0].Status != StatusPass || got[1].Status != StatusFail || !strings.Contains(got[1].Message, "no point at the same") {
		t.Fatalf("unexpected: %+v", got)
	}
	cmp.Selector.At = map[string][]string{"concurrency": {"8"}}
	got = Options{}.Comparisons([]plan.Comparison{cmp}, run)
	if len(got) != 1 || got[0].Status != StatusFail || !strings.Contains(got[0].Message, "matches no") {
		t.Fatalf("unexpected: %+v", got)
	}
}

// loaded is a noisy runner: most trials near the arm's speed, some slowed
// several-fold by other work on the machine.
func loaded(rng *rand.Rand, n int, tp float64) trialSet {
	var ts trialSet
	for i := 0; i < n; i++ {
		f := math.Exp(0.15 * rng.NormFloat64())
		if rng.Float64() < 0.35 {
			f /= 2 + 3*rng.Float64()
		}
		ts.tp = append(ts.tp, tp*f)
		ts.p95 = append(ts.p95, 1000/f)
	}
	return ts
}

// An engine twice as fast, measured on a loaded machine: ten trials per arm
// cannot show ratio ≥ 1.15 at the first look's level, and the check is
// inconclusive, not a failure; with the extra trials of later looks it
// passes. An engine that is no faster never passes.
func TestComparisonsSequentialLooks(t *testing.T) {
	cmp := []plan.Comparison{{Candidate: "opt", Reference: "ref", Metric: "throughput", MinRatio: 1.15}}
	o := Options{MaxLooks: 3}
	grow := func(seed uint64, candSpeed float64) [3]Check {
		rng := rand.New(rand.NewPCG(seed, 7))
		cand, ref := loaded(rng, 10, candSpeed), loaded(rng, 10, 1000)
		var out [3]Check
		for look := 1; look <= 3; look++ {
			if look > 1 {
				more, moreRef := loaded(rng, 10, candSpeed), loaded(rng, 10, 1000)
				cand.tp, cand.p95 = append(cand.tp, more.tp...), append(cand.p95, more.p95...)
				ref.tp, ref.p95 = append(ref.tp, moreRef.tp...), append(ref.p95, moreRef.p95...)
			}
			o.Look = look
			out[look-1] = o.Comparisons(cmp, mkRun(mkPoint("opt/c=1", "opt", c(1), cand), mkPoint("ref/c=1", "ref", c(1), ref)))[0]
		}
		return out
	}
	found := false
	for seed := uint64(1); seed <= 40 && !found; seed++ {
		looks := grow(seed, 2200)
		if looks[0].Status != StatusInconclusive {
			continue
		}
		found = true
		if looks[0].NeedN <= 10 || !strings.Contains(looks[0].Message, "inconclusive: ratio") {
			t.Errorf("look 1: want the trials that would decide it, got need %d: %s", looks[0].NeedN, looks[0].Message)
		}
		if looks[2].Status != StatusPass || looks[2].RefPoint != "ref/c=1" {
			t.Errorf("seed %d: 2.2x engine after 30 trials per arm: %s %s", seed, looks[2].Status, looks[2].Message)
		}
	}
	if !found {
		t.Fatal("no seed gave an inconclusive first look; the loaded-runner model no longer exercises the rule")
	}
	// An engine no faster on the same loaded machine is never passed; at
	// this noise it stays inconclusive (exit 4), not a false pass.
	for seed := uint64(1); seed <= 20; seed++ {
		for i, got := range grow(seed, 1000) {
			if got.Status == StatusPass {
				t.Errorf("seed %d look %d: an engine no faster passed: %s", seed, i+1, got.Message)
			}
		}
	}
}

func TestSpendingAddsUpToAlpha(t *testing.T) {
	for _, looks := range []int{1, 2, 3, 5} {
		sum := 0.0
		for k := 1; k <= looks; k++ {
			sum += Options{Look: k, MaxLooks: looks}.spend(0.01)
		}
		if math.Abs(sum-0.01) > 1e-12 {
			t.Errorf("%d looks spend %g of α=0.01", looks, sum)
		}
		if got := (Options{Look: 1, MaxLooks: looks}).lastLookAlpha(Options{Look: 1, MaxLooks: looks}.spend(0.01)); math.Abs(got-Options{Look: looks, MaxLooks: looks}.spend(0.01)) > 1e-15 {
			t.Errorf("%d looks: lastLookAlpha %g", looks, got)
		}
	}
}

// A trial in which no request finished (a window shorter than one request
// on a starved machine) is no evidence about either build: a comparison
// that loses trials to that is never failed for it. It is inconclusive,
// so the gate measures more trials of both arms, and an arm without any
// data at all could not be measured.
func TestComparisonsTrialsWithoutData(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ref := noisy(rng, 10, 1000, 20000, 0.02)
	equal := noisy(rng, 10, 1000, 20000, 0.02)
	empty := func(p result.Point, trials ...int) result.Point {
		for _, i := range trials {
			p.Trials[i].Metrics = result.Metrics{}
		}
		return p
	}
	tests := []struct {
		name   string
		cand   result.Point
		cmp    plan.Comparison
		status Status
		env    bool
		msg    string
	}{
		{"p50, one empty trial", empty(mkPoint("opt/c=1", "opt", c(1), equal), 3), plan.Comparison{Metric: "p50", MaxRatio: 1.15},
			StatusInconclusive, false, "only 9 candidate and 10 reference trial(s) have p50 data (1 had none)"},
		{"throughput, one empty trial", empty(mkPoint("opt/c=1", "opt", c(1), equal), 0), plan.Comparison{Metric: "throughput", MinRatio: 0.9},
			StatusInconclusive, false, "only 9 candidate and 10 reference trial(s) have throughput data (1 had none)"},
		{"every trial empty", empty(mkPoint("opt/c=1", "opt", c(1), equal), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), plan.Comparison{Metric: "p50", MaxRatio: 1.15},
			StatusFail, true, "could not measure: p50 in no trial of opt/c=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := mkRun(tt.cand, mkPoint("ref/c=1", "ref", c(1), ref))
			tt.cmp.Candidate, tt.cmp.Reference = "opt", "ref"
			got := Options{}.Comparisons([]plan.Comparison{tt.cmp}, run)
			if len(got) != 1 {
				t.Fatalf("got %d checks", len(got))
			}
			g := got[0]
			if g.Status != tt.status || g.Environment != tt.env || !strings.Contains(g.Message, tt.msg) {
				t.Fatalf("got %s (environment %v) %q, want %s (environment %v) containing %q", g.Status, g.Environment, g.Message, tt.status, tt.env, tt.msg)
			}
			v := &Verdict{Checks: got}
			switch tt.status {
			case StatusInconclusive:
				if ids := v.Undecided(); !slices.Equal(ids, []string{"opt/c=1", "ref/c=1"}) {
					t.Errorf("points given more trials: %v, want both arms", ids)
				}
				if o := v.Outcome(); o != OutcomeInconclusive {
					t.Errorf("outcome %s, want %s", o, OutcomeInconclusive)
				}
			case StatusFail:
				if o := v.Outcome(); o != OutcomeNotMeasured {
					t.Errorf("outcome %s, want %s", o, OutcomeNotMeasured)
				}
			}
		})
	}
}

// A comparison that cannot run its tests for want of positive values
// still states the ratio of the medians, or no effect at all: never a
// "+0.0%" that reads as "no change".
func TestComparisonWithoutPositiveValues(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cand, ref float64
		noValue   bool
		effect    float64
		status    Status
	}{
		{"candidate goodput 0", 0, 50, false, -1, StatusFail},
		// Both arms starved: nothing is shown about the candidate.
		{"both 0", 0, 0, true, 0, StatusInconclusive},
	} {
		cand := mkPoint("b/c=1", "b", c(1), constant(10, 1000, 100))
		ref := mkPoint("a/c=1", "a", c(1), constant(10, 1000, 100))
		for i := range cand.Trials {
			cand.Trials[i].Metrics.Throughput = tt.cand
		}
		for i := range ref.Trials {
			ref.Trials[i].Metrics.Throughput = tt.ref
		}
		cs := Options{}.Comparisons([]plan.Comparison{{Name: "g", Candidate: "b", Reference: "a", Metric: "throughput", MinRatio: 0.9}}, mkRun(cand, ref))
		if len(cs) != 1 || cs[0].Status != tt.status || cs[0].NoValue != tt.noValue || cs[0].Effect != tt.effect {
			t.Errorf("%s: %+v", tt.name, cs)
		}
	}
}
