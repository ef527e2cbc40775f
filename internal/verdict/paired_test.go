package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

var epoch = time.Date(2026, 12, 6, 21, 0, 0, 0, time.UTC)

// rounds gives a's and b's trials the start times of interleaved rounds of
// one window each: a first in every round, or, counterbalanced as the
// engine measures them, a first in even rounds and b first in odd ones.
func rounds(a, b *result.Point, counterbalanced bool) {
	for i := range a.Trials {
		first, second := &a.Trials[i], &b.Trials[i]
		if counterbalanced && i%2 == 1 {
			first, second = second, first
		}
		first.Start = epoch.Add(time.Duration(2*i) * time.Second)
		second.Start = epoch.Add(time.Duration(2*i+1) * time.Second)
	}
}

func TestPairedLogRatios(t *testing.T) {
	tests := []struct {
		name  string
		setup func(a, b *result.Point)
		ok    bool
		n     int
	}{
		{"a b rounds", func(a, b *result.Point) { rounds(a, b, false) }, true, 10},
		{"a b, b a rounds", func(a, b *result.Point) { rounds(a, b, true) }, true, 10},
		{"mix members, measured at once", func(a, b *result.Point) {
			for i := range a.Trials {
				a.Trials[i].Start = epoch.Add(time.Duration(i) * time.Second)
				b.Trials[i].Start = a.Trials[i].Start
			}
		}, true, 10},
		{"one arm after the other", func(a, b *result.Point) {
			for i := range a.Trials {
				a.Trials[i].Start = epoch.Add(time.Duration(i) * time.Second)
				b.Trials[i].Start = epoch.Add(time.Duration(10+i) * time.Second)
			}
		}, false, 0},
		{"no start times", func(a, b *result.Point) {}, false, 0},
		{"unequal trial counts", func(a, b *result.Point) {
			rounds(a, b, true)
			b.Trials = b.Trials[:9]
		}, false, 0},
		{"a round without data is left out", func(a, b *result.Point) {
			rounds(a, b, true)
			a.Trials[3].Metrics.Requests = 0
		}, true, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mkPoint("new/c=1", "new", c(1), constant(10, 1100, 20000))
			b := mkPoint("old/c=1", "old", c(1), constant(10, 1000, 20000))
			tt.setup(&a, &b)
			d, ok := pairedLogRatios(&a, &b, "throughput")
			if ok != tt.ok || len(d) != tt.n {
				t.Fatalf("paired %v with %d ratios, want %v with %d", ok, len(d), tt.ok, tt.n)
			}
			for _, x := range d {
				if math.Abs(x-math.Log(1.1)) > 1e-9 {
					t.Errorf("log ratio %g, want log 1.1", x)
				}
			}
		})
	}
}

// driftSet is n trials of a CPU-bound model on a machine whose other work
// comes and goes: each round's windows share a factor of up to ±30% (a
// neighbour's build starting and ending), and each window has a further
// noise of its own of relative size cv.
func driftSet(n int, ratio, cv float64, seed uint64) trialSet {
	noise := spread(n, 1, cv, seed)
	var ts trialSet
	for i := range n {
		f := (1 + 0.3*math.Sin(float64(i))) * noise[i]
		ts.tp = append(ts.tp, 1000*ratio/f)
		ts.p95 = append(ts.p95, 20000*ratio*f)
	}
	return ts
}

// Interleaved arms pair by round. A swing of the machine that moves both
// windows of a round alike hides a 10% slowdown, and an unchanged build's
// pass, from a test of the arms as independent samples; the pairs'
// ratios show both.
func TestComparisonsPaired(t *testing.T) {
	tests := []struct {
		name             string
		ratio            float64
		paired, unpaired Status
		msg              string
	}{
		{"10% slower", 1.10, StatusFail, StatusInconclusive, "a change from the unchanged ratio 1 is shown"},
		{"unchanged", 1, StatusPass, StatusInconclusive, "lies wholly below the bound 1.05"},
		{"twice as slow", 2, StatusFail, StatusFail, "lies wholly above it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, pair := range []bool{false, true} {
				cand := mkPoint("new/c=1", "new", c(1), driftSet(20, tt.ratio, 0.02, 3))
				ref := mkPoint("old/c=1", "old", c(1), driftSet(20, 1, 0.02, 5))
				if pair {
					rounds(&cand, &ref, true)
				}
				cmp := plan.Comparison{Candidate: "new", Reference: "old", Metric: "p95", MaxRatio: 1.05, UnchangedRatio: 1}
				g := Options{}.Comparisons([]plan.Comparison{cmp}, mkRun(cand, ref))[0]
				want, method := tt.unpaired, methodUnpaired
				if pair {
					want, method = tt.paired, methodPaired
				}
				t.Logf("paired %v: %s: %s", pair, g.Status, g.Message)
				if g.Status != want || g.Method != method {
					t.Errorf("paired %v: %s by %s, want %s by %s", pair, g.Status, g.Method, want, method)
				}
				if pair && !strings.Contains(g.Message, tt.msg) {
					t.Errorf("message %q lacks %q", g.Message, tt.msg)
				}
				if pair && (g.N != 20 || g.NRef != 20 || !(g.MDE > 0 && g.MDE < 0.05)) {
					t.Errorf("n %d/%d, MDE %g: want 20/20 and the pairs' small MDE", g.N, g.NRef, g.MDE)
				}
			}
		})
	}
}

// Pairing keeps the rank test's error rate: of many comparisons of equal
// arms measured in counterbalanced rounds on a drifting machine, where
// the second window of each round runs 3% slower (a warm cache, a
// neighbour waking), at most about α fail. The order alternating is what
// makes that so: with the same arm always second, the order's 3% would be
// a change the pairs show.
func TestComparisonsPairedFalseFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const runs, n = 200, 20
	fails := 0
	for range runs {
		var a, b trialSet
		level := 1.0
		for i := range n {
			level *= math.Exp(0.05 * rng.NormFloat64()) // a random walk
			second := [2]float64{1, 1.03}
			if i%2 == 1 {
				second = [2]float64{1.03, 1}
			}
			for k, ts := range []*trialSet{&a, &b} {
				f := level * second[k] * (1 + 0.1*rng.NormFloat64())
				ts.tp = append(ts.tp, 1000/f)
				ts.p95 = append(ts.p95, 20000*f)
			}
		}
		cand, ref := mkPoint("new/c=1", "new", c(1), a), mkPoint("old/c=1", "old", c(1), b)
		rounds(&cand, &ref, true)
		cmp := plan.Comparison{Candidate: "new", Reference: "old", Metric: "p95", MaxRatio: 1.05, UnchangedRatio: 1}
		g := (Options{Resamples: 200}).Comparisons([]plan.Comparison{cmp}, mkRun(cand, ref))[0]
		if g.Method != methodPaired {
			t.Fatalf("method %s, want %s", g.Method, methodPaired)
		}
		if g.Status == StatusFail {
			fails++
		}
	}
	// α = 0.01 one-sided: 2 expected; 6 or more has probability < 2%.
	if fails > 5 {
		t.Errorf("%d of %d comparisons of equal arms failed", fails, runs)
	}
}
