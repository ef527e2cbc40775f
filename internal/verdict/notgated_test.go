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
		thr     float64 // this run's throughput (0: the history's, 1000)
		want    Status
		message string
	}{
		{"quiet run gates a 20% drop", -0.20, 0.02, 0, StatusPass, ""},
		{"noisy run cannot see a 5% drop", 0, 0.40, 0, StatusNotGated, "not gated: testbed noise hides changes under"},
		{"noisy run cannot see a 20% drop", -0.20, 0.40, 0, StatusNotGated, "meant to catch 20%"},
		// A rise past the interval is no sign that a drop would have
		// been seen: on a busy runner a history recorded in a slower
		// spell made a 10% slower build's throughput "improved" by +73%,
		// and the run passed on that check alone.
		{"improvement cannot see a 5% drop", 0, 0.40, 3000, StatusNotGated, "not gated: testbed noise hides changes under"},
		{"quiet improvement is gated", -0.20, 0.02, 1500, StatusPass, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			base := history(t, rng, 8, 0.01)
			spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}
			if tt.tol != 0 {
				spec.Tolerances = map[string]float64{"throughput": tt.tol}
			}
			thr := tt.thr
			if thr == 0 {
				thr = 1000
			}
			run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, thr, 20000, tt.noise)),
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
				if b := blindAt(v, "a/c=1"); b == nil || !strings.Contains(b.Message, "no baseline check at a/c=1 could see a change (1 of 1 not gated or skipped") {
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

// Extra trials can gate a check that was not gated at the first look, but
// the settled verdict keeps the first look's decision; whether the point
// can see a change is judged on those settled checks. Before, the second
// look's gated check hid the blind point and the run passed on nothing (a
// 2x slower model at load 20, after its extra trials).
func TestBlindAfterSettle(t *testing.T) {
	nb := func(metric string, st Status) Check {
		return Check{Kind: KindBaseline, Key: CheckKey("baseline.metric." + metric), Name: metric + " vs baseline",
			Model: "m", Point: "m/c=1", Metric: metric, Status: st, Method: "prediction-interval", NRef: 5}
	}
	first := &Verdict{minRuns: 5, Checks: []Check{nb("p50", StatusNotGated), nb("server_work_infer", StatusNotGated)}}
	first.Checks = append(first.Checks, blind(first.Checks, 5)...)
	second := &Verdict{minRuns: 5, Checks: []Check{nb("p50", StatusNotGated), nb("server_work_infer", StatusPass)}}
	second.Checks = append(second.Checks, blind(second.Checks, 5)...)
	if len(second.Checks) != 2 {
		t.Fatalf("the second look alone is not blind, yet: %+v", second.Checks)
	}
	got := Settle(first, second)
	n := 0
	for _, c := range got.Checks {
		if c.Key == KeyBlind {
			n++
		}
	}
	if n != 1 || got.Outcome() != OutcomeInconclusive {
		t.Errorf("settled: %d blind check(s), outcome %s; want 1 and inconclusive", n, got.Outcome())
	}
	// A point that is blind at both looks is said once.
	if again := Settle(first, first); len(again.Checks) != 3 {
		t.Errorf("settled twice blind: %d checks, want 3", len(again.Checks))
	}
}

// A point whose baseline checks are not gated or skipped sees nothing.
func TestBlindCountsSkippedChecks(t *testing.T) {
	nb := func(metric string, st Status) Check {
		return Check{Kind: KindBaseline, Key: CheckKey("baseline.metric." + metric), Point: "m/c=1", Metric: metric, Status: st, Method: "prediction-interval", NRef: 5}
	}
	if got := blind([]Check{nb("p50", StatusNotGated), nb("throughput", StatusSkip)}, 5); len(got) != 1 {
		t.Errorf("not gated and skipped: %d blind checks, want 1", len(got))
	}
	if got := blind([]Check{nb("p50", StatusNotGated), nb("throughput", StatusPass)}, 5); len(got) != 0 {
		t.Errorf("one gated: %d blind checks, want 0", len(got))
	}
}
