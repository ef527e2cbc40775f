package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfscen/perfscen/runner/plan"
)

// spread is n trials whose values are the normal quantiles of a
// coefficient of variation cv around center, in an order drawn from seed:
// an arm with exactly the median and spread it is meant to have.
func spread(n int, center, cv float64, seed uint64) []float64 {
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = center * (1 + cv*distuv.UnitNormal.Quantile((float64(i)+0.5)/float64(n)))
	}
	rand.New(rand.NewPCG(seed, seed)).Shuffle(n, func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	return vs
}

func spreadSet(n int, ratio, cv float64, seed uint64) trialSet {
	return trialSet{tp: spread(n, 1000*ratio, cv, seed), p95: spread(n, 20000*ratio, cv, seed+1)}
}

// A comparison of two builds of one model, with unchanged_ratio 1, fails
// when a change is shown and its ratio lies beyond the bound; without it,
// a fail needs the ratio shown beyond the bound. These arms are what the
// 2-core runner gave a CPU-bound model at load ~10: 20 trials an arm,
// about 8% apart from trial to trial.
func TestComparisonsUnchangedRatio(t *testing.T) {
	type arms struct{ ratio, noise float64 }
	tests := []struct {
		name    string
		arms    arms
		cmp     plan.Comparison
		with    Status // unchanged_ratio 1
		without Status
		msg     string // in the message with it
	}{
		{"10% slower, noisy", arms{1.10, 0.08}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusFail, StatusInconclusive,
			"ratio 1.1"},
		{"10% less throughput, noisy", arms{0.90, 0.08}, plan.Comparison{Metric: "throughput", MinRatio: 0.95}, StatusFail, StatusInconclusive,
			"a change from the unchanged ratio 1 is shown"},
		{"4% slower, quiet: a change within the bound passes", arms{1.04, 0.003}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusPass, StatusPass,
			"lies wholly below the bound 1.05"},
		{"4% slower, noisy: a change within the bound is not a fail", arms{1.04, 0.04}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusInconclusive, StatusInconclusive,
			"contains the bound 1.05"},
		{"beyond the bound, a change not shown by the rank test", arms{1.06, 0.075}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusInconclusive, StatusInconclusive,
			"lies wholly above the unchanged ratio 1, but the rank test's p"},
		{"beyond the bound, too noisy to show a change", arms{1.10, 0.4}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusInconclusive, StatusInconclusive,
			"contains the unchanged ratio 1"},
		{"twice as slow", arms{2, 0.08}, plan.Comparison{Metric: "p95", MaxRatio: 1.05}, StatusFail, StatusFail,
			"lies wholly above it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := spreadSet(20, 1, tt.arms.noise, 1)
			cand := spreadSet(20, tt.arms.ratio, tt.arms.noise, 3)
			run := mkRun(mkPoint("new/c=1", "new", c(1), cand), mkPoint("old/c=1", "old", c(1), ref))
			var need [2]int // trials that would decide it, without and with
			for i, u := range []float64{0, 1} {
				cmp := tt.cmp
				cmp.Candidate, cmp.Reference, cmp.UnchangedRatio = "new", "old", u
				got := Options{}.Comparisons([]plan.Comparison{cmp}, run)
				if len(got) != 1 {
					t.Fatalf("unchanged_ratio %g: got %d checks", u, len(got))
				}
				g, want := got[0], tt.without
				if u > 0 {
					want = tt.with
				}
				if g.Status != want {
					t.Errorf("unchanged_ratio %g: got %s (%s), want %s", u, g.Status, g.Message, want)
				}
				if u > 0 && !strings.Contains(g.Message, tt.msg) {
					t.Errorf("message %q lacks %q", g.Message, tt.msg)
				}
				t.Logf("unchanged_ratio %g: %s: %s", u, g.Status, g.Message)
				if u > 0 && g.Unchanged != 1 {
					t.Errorf("check's unchanged ratio %g, want 1", g.Unchanged)
				}
				need[i] = g.NeedN
			}
			// Undecided beyond the bound, the trials that would decide it
			// are those that show a change from 1, fewer than those that
			// would show the ratio past the bound.
			if tt.with == StatusInconclusive && tt.arms.ratio > 1.05 && !(need[1] < need[0]) {
				t.Errorf("trials to decide: %d with unchanged_ratio, %d without; want fewer with it", need[1], need[0])
			}
		})
	}
}

// The rule keeps the rank test's error rate: of many comparisons of arms
// that do not differ, at most about α fail, however noisy the trials.
func TestComparisonsUnchangedRatioFalseFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const runs = 200
	fails := 0
	for i := 0; i < runs; i++ {
		ref := noisy(rng, 20, 1000, 20000, 0.1)
		cand := noisy(rng, 20, 1000, 20000, 0.1)
		run := mkRun(mkPoint("new/c=1", "new", c(1), cand), mkPoint("old/c=1", "old", c(1), ref))
		cmp := plan.Comparison{Candidate: "new", Reference: "old", Metric: "p95", MaxRatio: 1.05, UnchangedRatio: 1}
		if g := (Options{Resamples: 200}).Comparisons([]plan.Comparison{cmp}, run)[0]; g.Status == StatusFail {
			fails++
		}
	}
	// α = 0.01 one-sided: 2 expected; 6 or more has probability < 2%.
	if fails > 5 {
		t.Errorf("%d of %d comparisons of equal arms failed", fails, runs)
	}
}
