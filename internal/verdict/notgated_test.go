package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// A baseline check that passes while its detectable change exceeds the
// change it exists to catch is not gated: never a plain pass, and with
// RequireGated the run is inconclusive.
func TestBaselineNotGated(t *testing.T) {
	tests := []struct {
		name    string
		tol     float64 // the scenario's throughput tolerance (0: default)
		noise   float64 // this run's trial spread
		want    Status
		message string
	}{
		{"quiet run gates a 20% drop", -0.20, 0.02, StatusPass, ""},
		{"noisy run cannot see a 5% drop", 0, 0.40, StatusNotGated, "not gated: testbed noise hides changes under"},
		{"noisy run cannot see a 20% drop", -0.20, 0.40, StatusNotGated, "meant to catch 20%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			base := history(t, rng, 8, 0.01)
			spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}
			if tt.tol != 0 {
				spec.Tolerances = map[string]float64{"throughput": tt.tol}
			}
			run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, tt.noise)),
				mkPoint("a/c=2", "a", c(2), noisy(rng, 10, 1800, 22000, 0.02)))
			checks := plan.Checks{Baseline: spec}
			v := Options{}.Evaluate(checks, run, base)
			var got *Check
			for i := range v.Checks {
				if v.Checks[i].Point == "a/c=1" && v.Checks[i].Metric == "throughput" {
					got = &v.Checks[i]
				}
			}
			if got == nil {
				t.Fatal("no throughput check at a/c=1")
			}
			if got.Status != tt.want || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("status %s (%q), MDE %.3f; want %s with %q", got.Status, got.Message, got.MDE, tt.want, tt.message)
			}
			for _, w := range got.Warnings {
				if strings.HasPrefix(w, "noisy baseline") {
					t.Errorf("the status says it; warning %q repeats it", w)
				}
			}
			// A point whose only baseline check is not gated has nothing
			// to pass on: the run is inconclusive, and says which point.
			want := OutcomePass
			if tt.want == StatusNotGated {
				want = OutcomeInconclusive
				if b := blindAt(v, "a/c=1"); b == nil || !strings.Contains(b.Message, "no baseline check at a/c=1 could see a change (1 of 1 not gated") {
					t.Errorf("no blind check at a/c=1: %+v", b)
				}
			}
			if v.Outcome() != want {
				t.Errorf("outcome %s, want %s", v.Outcome(), want)
			}
			strict := Options{RequireGated: true}.Evaluate(checks, run, base)
			if strict.Outcome() != want {
				t.Errorf("with RequireGated: outcome %s, want %s", strict.Outcome(), want)
			}
		})
	}
}

func blindAt(v *Verdict, point string) *Check {
	for i := range v.Checks {
		if v.Checks[i].Key == KeyBlind && v.Checks[i].Point == point {
			return &v.Checks[i]
		}
	}
	return nil
}

// A point where one baseline check is gated passes on it, though the
// others are not gated: only a point that can see nothing is undecided.
func TestBlindOnlyWhereNothingIsGated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := history(t, rng, 8, 0.01)
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p95"}, Tolerances: map[string]float64{"throughput": -0.30, "p95": 0.001}}
	run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, 0.02)), mkPoint("a/c=2", "a", c(2), noisy(rng, 10, 1800, 22000, 0.02)))
	v := Options{}.Evaluate(plan.Checks{Baseline: spec}, run, base)
	gated, notGated := 0, 0
	for _, c := range v.Checks {
		switch {
		case c.Kind == KindBaseline && c.Key != KeyTestbed && c.Key != KeyBlind && c.Status == StatusNotGated:
			notGated++
		case c.Kind == KindBaseline && c.Key != KeyTestbed && c.Key != KeyBlind:
			gated++
		}
	}
	if gated == 0 || notGated == 0 {
		t.Fatalf("want gated and not-gated checks side by side, have %d and %d", gated, notGated)
	}
	for _, c := range v.Checks {
		if c.Key == KeyBlind {
			t.Errorf("blind check where a check is gated: %s", c.Message)
		}
	}
	if v.Outcome() != OutcomePass {
		t.Errorf("outcome %s, want pass", v.Outcome())
	}
}
