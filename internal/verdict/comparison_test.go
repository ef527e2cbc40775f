package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/plan"
)

func TestComparisons(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref := noisy(rng, 10, 1000, 20000, 0.02)
	fast := noisy(rng, 10, 1300, 15000, 0.02)
	same := noisy(rng, 10, 1000, 20000, 0.02)
	few := noisy(rng, 5, 1300, 15000, 0.02)
	tests := []struct {
		name    string
		cand    trialSet
		cmp     plan.Comparison
		status  Status
		message string
	}{
		{"clear win", fast, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusPass, "interval"},
		{"not shown", same, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusFail, "not shown"},
		{"latency max ratio", fast, plan.Comparison{Metric: "p95", MaxRatio: 0.9}, StatusPass, ""},
		{"latency max ratio fails", same, plan.Comparison{Metric: "p95", MaxRatio: 0.9}, StatusFail, ""},
		{"too few trials", few, plan.Comparison{Metric: "throughput", MinRatio: 1.15}, StatusFail, "too few trials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := mkRun(mkPoint("opt/c=1", "opt", c(1), tt.cand), mkPoint("ref/c=1", "ref", c(1), ref))
			tt.cmp.Candidate, tt.cmp.Reference = "opt", "ref"
			got := Comparisons([]plan.Comparison{tt.cmp}, run)
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
	a, b := Comparisons(cmp, run), Comparisons(cmp, run)
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
	got := Comparisons([]plan.Comparison{cmp}, run)
	if len(got) != 2 || got[0].Status != StatusPass || got[1].Status != StatusFail || !strings.Contains(got[1].Message, "no point at the same") {
		t.Fatalf("unexpected: %+v", got)
	}
	cmp.Selector.At = map[string][]string{"concurrency": {"8"}}
	got = Comparisons([]plan.Comparison{cmp}, run)
	if len(got) != 1 || got[0].Status != StatusFail || !strings.Contains(got[0].Message, "matches no") {
		t.Fatalf("unexpected: %+v", got)
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		p, alpha []float64
		want     []bool
	}{
		{[]float64{0.001, 0.004, 0.03}, []float64{0.01, 0.01, 0.01}, []bool{true, true, false}},
		{[]float64{0.004, 0.004, 0.004}, []float64{0.01, 0.01, 0.01}, []bool{false, false, false}},
		{[]float64{0.02, 0.001}, []float64{0.05, 0.01}, []bool{true, true}},
		{nil, nil, []bool{}},
	}
	for _, tt := range tests {
		got := holm(tt.p, tt.alpha)
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Errorf("holm(%v, %v) = %v, want %v", tt.p, tt.alpha, got, tt.want)
				break
			}
		}
	}
}
