package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// history records k runs of one point, each with its own job effect.
func history(t *testing.T, rng *rand.Rand, k int, jobSD float64) *baseline.File {
	t.Helper()
	f := baseline.New("demo")
	for i := 0; i < k; i++ {
		j := 1 + jobSD*rng.NormFloat64()
		run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000*j, 20000/j, 0.02)),
			mkPoint("a/c=2", "a", c(2), noisy(rng, 10, 1800*j, 22000/j, 0.02)))
		if _, err := baseline.Update(f, run, baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestBaselineGate(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p95"}}
	tests := []struct {
		name      string
		k         int
		tp, lat   float64 // this run's level relative to the history
		unstable  bool
		wantTP    Class
		wantP95   Class
		wantState Status
		method    string
		warning   string
	}{
		{"unchanged", 8, 1, 1, false, ClassUnchanged, ClassUnchanged, StatusPass, "prediction-interval", ""},
		{"throughput drop", 8, 0.85, 1, false, ClassRegressed, ClassUnchanged, StatusFail, "prediction-interval", ""},
		{"latency rise", 8, 1, 1.2, false, ClassUnchanged, ClassRegressed, StatusFail, "prediction-interval", ""},
		{"improvement", 8, 1.2, 0.8, false, ClassImproved, ClassImproved, StatusPass, "prediction-interval", ""},
		{"short history drop", 3, 0.85, 1, false, ClassRegressed, ClassUnchanged, StatusFail, "tolerance", "uncalibrated baseline"},
		{"short history within tolerance", 3, 0.97, 1.05, false, ClassUnchanged, ClassUnchanged, StatusPass, "tolerance", "uncalibrated baseline"},
		{"unstable point", 8, 0.5, 1, true, ClassUnstable, ClassUnstable, StatusSkip, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			base := history(t, rng, tt.k, 0.01)
			p := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000*tt.tp, 20000*tt.lat, 0.02))
			if tt.unstable {
				p.Status = result.PointUnstable
			}
			got := Options{}.Baseline(spec, base, mkRun(p, mkPoint("a/c=9", "a", c(9), constant(10, 1, 1))))
			byKey := map[string]Check{}
			for _, c := range got {
				byKey[c.Point+" "+c.Metric] = c
			}
			tp, p95 := byKey["a/c=1 throughput"], byKey["a/c=1 p95"]
			if tp.Class != tt.wantTP || p95.Class != tt.wantP95 {
				t.Fatalf("classes %s/%s, want %s/%s: %s | %s", tp.Class, p95.Class, tt.wantTP, tt.wantP95, tp.Message, p95.Message)
			}
			worst := StatusPass
			for _, c := range []Check{tp, p95} {
				if c.Status == StatusFail || (c.Status == StatusSkip && worst != StatusFail) {
					worst = c.Status
				}
				if c.Method != tt.method {
					t.Errorf("method %q, want %q", c.Method, tt.method)
				}
				if tt.warning != "" && !strings.Contains(strings.Join(c.Warnings, ";"), tt.warning) {
					t.Errorf("warnings %q lack %q", c.Warnings, tt.warning)
				}
				// The limit lies on the side a regression crosses: below the
				// history for throughput, above it for latency.
				if c.Method != "" {
					center := c.Value / (1 + c.Effect)
					if higher := c.Metric == "throughput"; higher != (c.Bound < center) {
						t.Errorf("%s limit %.4g on the wrong side of the history centre %.4g", c.Metric, c.Bound, center)
					}
				}
				if c.Method == "prediction-interval" && (c.MDE <= 0 || c.NRef != tt.k || c.N != 10) {
					t.Errorf("mde %g n %d nref %d", c.MDE, c.N, c.NRef)
				}
			}
			if worst != tt.wantState {
				t.Errorf("status %s, want %s", worst, tt.wantState)
			}
			if n := byKey["a/c=9 throughput"]; n.Class != ClassNew || n.Status != StatusSkip {
				t.Errorf("new point: %+v", n)
			}
			if m := byKey["a/c=2 throughput"]; m.Class != ClassMissing || m.Status != StatusWarn {
				t.Errorf("missing point: %+v", m)
			}
		})
	}
}

func TestEvaluateBaselineNotices(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	run := mkRun(mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 20000, 0.02)))
	checks := plan.Checks{Baseline: &plan.Baseline{Path: "baselines/demo.json"}}

	v := Options{}.Evaluate(checks, run, nil)
	if len(v.Checks) != 0 || len(v.Notices) != 1 || !strings.Contains(v.Notices[0], "perfscen baseline update") {
		t.Fatalf("no baseline: %+v", v)
	}

	base := history(t, rng, 6, 0.01)
	run.Environment.Testbed = "other"
	v = Options{}.Evaluate(checks, run, base)
	if len(v.Failed())+len(v.Inconclusive()) != 0 || len(v.Notices) != 1 || !strings.Contains(v.Notices[0], "testbed other") {
		t.Fatalf("testbed mismatch: %+v", v)
	}
	if len(v.Checks) != 1 || v.Checks[0].Status != StatusNotGated {
		t.Fatalf("testbed mismatch must say the run was not gated: %+v", v.Checks)
	}
}

// A change beyond the prediction interval but inside the scenario's stated
// tolerance passes with a warning; beyond the tolerance it fails.
func TestBaselineToleranceFloorsPredictionInterval(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tol   float64
		level float64
		want  Class
	}{
		{"no tolerance: 6% drop fails", 0, 0.94, ClassRegressed},
		{"within a 10% tolerance", -0.10, 0.94, ClassUnchanged},
		{"beyond a 10% tolerance", -0.10, 0.85, ClassRegressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}, Confidence: 0.99, MinRuns: 5}
			if tc.tol != 0 {
				spec.Tolerances = map[string]float64{"throughput": tc.tol}
			}
			rng := rand.New(rand.NewPCG(3, 4))
			base := history(t, rng, 10, 0.003)
			p := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000*tc.level, 20000, 0.005))
			var got *Check
			for _, ch := range (Options{}).Baseline(spec, base, mkRun(p)) {
				if ch.Point == "a/c=1" && ch.Metric == "throughput" {
					ch := ch
					got = &ch
				}
			}
			if got == nil || got.Class != tc.want || got.Method != "prediction-interval" {
				t.Fatalf("got %+v, want class %s", got, tc.want)
			}
		})
	}
}

// Problem 6 of the verdict-integrity issue: a one-run history whose trials
// swing wildly once gave a throughput bound of −4067 infer/s, so a 27%
// drop passed. A band that reaches zero is reported as uncalibrated (a
// warning, never a pass), and no throughput bound is negative.
func TestYoungNoisyBaselineIsUncalibrated(t *testing.T) {
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}}
	f := baseline.New("demo")
	wild := trialSet{tp: []float64{6032, 7392, 5984, 2992, 1040}, p95: []float64{1, 1, 1, 1, 1}}
	if _, err := baseline.Update(f, mkRun(mkPoint("a/c=1", "a", c(1), wild)), baseline.UpdateOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	run := mkRun(mkPoint("a/c=1", "a", c(1), constant(5, 3400, 1)))
	var got *Check
	for _, ch := range (Options{}).Baseline(spec, f, run) {
		if ch.Metric == "throughput" {
			ch := ch
			got = &ch
		}
	}
	if got == nil {
		t.Fatal("no throughput check")
	}
	if got.Bound < 0 {
		t.Errorf("negative throughput bound %g", got.Bound)
	}
	if got.Status != StatusNotGated || !strings.Contains(got.Message, "uncalibrated") || !strings.Contains(got.Message, "hides any change under 100%") {
		t.Errorf("status %s, message %q; want not gated, uncalibrated", got.Status, got.Message)
	}
	// No band of ±100% or more is printed as if it were a tolerance.
	for _, w := range got.Warnings {
		if strings.Contains(w, "tolerance instead of") {
			t.Errorf("warning states a band the data does not support: %q", w)
		}
	}
	if got.Lo != 0 || got.Hi != 0 || !got.Uncalibrated {
		t.Errorf("interval [%g, %g], uncalibrated %v", got.Lo, got.Hi, got.Uncalibrated)
	}
}

// The requests a trial needs for a tail percentile to gate are exact:
// p90 needs 100 (10 past it), not the 101 of ceil(10/(1-0.9)) in floating
// point, and a trial of 100 rests on its 10 slowest, not 9.
func TestTailRequestsExact(t *testing.T) {
	for _, tt := range []struct {
		metric       string
		need         int
		n, beyondOfN float64
	}{
		{"p90", 100, 100, 10},
		{"p95", 200, 200, 10},
		{"p99", 1000, 1000, 10},
		{"ttft_p90", 100, 990, 99},
		{"latency_max", 10000, 10000, 10},
	} {
		q, ok := metricQuantile(tt.metric)
		if !ok {
			t.Fatalf("%s: no quantile", tt.metric)
		}
		need, beyond := tailRequests(q)
		if need != tt.need || beyond(tt.n) != tt.beyondOfN {
			t.Errorf("%s: need %d, %g of %g beyond; want %d, %g", tt.metric, need, beyond(tt.n), tt.n, tt.need, tt.beyondOfN)
		}
	}
	// At the boundary: p90 over trials of 100 requests gates (the +40%
	// fails); over 99 it is not gated, saying what it needs.
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"p90"}}
	rng := rand.New(rand.NewPCG(27, 28))
	base := history(t, rng, 8, 0.01)
	slow := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 1000, 28000, 0.01))
	for _, tt := range []struct {
		requests int64
		want     Status
		msg      string
	}{
		{100, StatusFail, ""},
		{99, StatusNotGated, "a trial's p90 of 99 requests rests on its 9 slowest; it needs 100 requests a trial to gate"},
	} {
		p := slow
		p.Trials = append([]result.Trial(nil), slow.Trials...)
		for i := range p.Trials {
			p.Trials[i].Metrics.Requests = tt.requests
		}
		for _, ch := range (Options{}).Baseline(spec, base, mkRun(p)) {
			if ch.Point == "a/c=1" && (ch.Status != tt.want || !strings.Contains(ch.Message, tt.msg)) {
				t.Errorf("%d requests a trial: %s %q, want %s saying %q", tt.requests, ch.Status, ch.Message, tt.want, tt.msg)
			}
		}
	}
}
