package verdict

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Problem 5 of the verdict-integrity issue: a check's value is the
// point's figure, the number every report prints, not perf_analyzer's
// pooled merge in Summary.
func TestChecksShowThePointsFigure(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	base := history(t, rng, 8, 0.01)
	p := mkPoint("a/c=1", "a", c(1), noisy(rng, 9, 1000, 20000, 0.05))
	// A pooled figure that differs from the median, as a real merge does
	// when windows differ in length.
	p.Summary.Throughput, p.Summary.P95Us = 1234, 4321
	run := mkRun(p)
	ths := []plan.Threshold{
		{Metric: "throughput", Op: ">=", Value: 1, Text: "throughput >= 1/s"},
		{Metric: "p95", Op: "<", Value: 1e9, Text: "p95 < 1000s"},
	}
	spec := &plan.Baseline{Path: "b.json", Metrics: []string{"throughput", "p95"}}
	checks := append(Thresholds(ths, run), Options{}.Baseline(spec, base, run)...)
	seen := 0
	for _, ch := range checks {
		if ch.Metric == "" || ch.Point != "a/c=1" {
			continue
		}
		fig, ok := p.Figure(ch.Metric)
		if !ok || fig.Stat != result.StatMedian || fig.Trials != 9 {
			t.Fatalf("figure of %s: %+v, %v", ch.Metric, fig, ok)
		}
		if ch.Value != fig.Value {
			t.Errorf("%s %s: value %g, the point's figure is %g (pooled %g)", ch.Kind, ch.Metric, ch.Value, fig.Value, summaryOf(p, ch.Metric))
		}
		seen++
	}
	if seen != 4 {
		t.Fatalf("%d checks at the point, want 4", seen)
	}
}

func summaryOf(p result.Point, metric string) float64 {
	v, _ := p.Summary.Value(metric)
	return v
}

// The bound a check prints is the one it was held to: across a sweep of
// run levels, with and without a tolerance, over a long and a short
// history and with four metrics sharing Holm's correction, a value within
// the bound never fails and one beyond it never passes.
func TestBoundIsTheEffectiveBound(t *testing.T) {
	metrics := []string{"throughput", "p50", "p95", "p99"}
	var rescuedByHolm, rescuedByTolerance, failed int
	for _, k := range []int{3, 10} {
		for _, tol := range []float64{0, 0.06} {
			spec := &plan.Baseline{Path: "b.json", Metrics: metrics, Confidence: 0.99, MinRuns: 5}
			if tol != 0 {
				spec.Tolerances = map[string]float64{"throughput": -tol, "p50": tol, "p95": tol, "p99": tol}
			}
			rng := rand.New(rand.NewPCG(uint64(k), 99))
			base := history(t, rng, k, 0.01)
			for level := 0.85; level <= 1.0; level += 0.001 {
				p := mkPoint("a/c=1", "a", c(1), noisy(rand.New(rand.NewPCG(5, 6)), 10, 1000*level, 20000/level, 0.01))
				for _, ch := range (Options{}).Baseline(spec, base, mkRun(p)) {
					if ch.Point != "a/c=1" || ch.Method == "" || ch.Status == StatusInconclusive || ch.Uncalibrated {
						continue
					}
					higher := ch.Metric == "throughput"
					beyond := ch.Value < ch.Bound
					if !higher {
						beyond = ch.Value > ch.Bound
					}
					if beyond != (ch.Status == StatusFail) {
						t.Errorf("k=%d tol=%g level %.4f %s: value %.6g, bound %s %.6g, status %s (%s; %v)",
							k, tol, level, ch.Metric, ch.Value, ch.Op, ch.Bound, ch.Status, ch.Message, ch.Warnings)
					}
					w := strings.Join(ch.Warnings, ";")
					switch {
					case ch.Status == StatusFail:
						failed++
					case strings.Contains(w, "after correcting"):
						rescuedByHolm++
					case strings.Contains(w, "tolerance"):
						rescuedByTolerance++
					}
				}
			}
		}
	}
	// The sweep must reach the cases the bound column used to misstate.
	if rescuedByHolm == 0 || rescuedByTolerance == 0 || failed == 0 {
		t.Fatalf("sweep too narrow: %d failed, %d passed by Holm's correction, %d by the tolerance", failed, rescuedByHolm, rescuedByTolerance)
	}
}

// Checks that compared nothing carry no value, bound or effect to print:
// an unstable point's baseline checks, a threshold at a failed point.
func TestUncomparedChecksHaveNoValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := history(t, rng, 8, 0.01)
	unstable := mkPoint("a/c=1", "a", c(1), noisy(rng, 10, 900, 20000, 0.02))
	unstable.Status = result.PointUnstable
	failed := mkPoint("a/c=2", "a", c(2), trialSet{})
	failed.Status = result.PointFailed
	run := mkRun(unstable, failed)
	checks := Options{}.Evaluate(plan.Checks{
		Thresholds: []plan.Threshold{{Metric: "throughput", Op: ">=", Value: 1, Text: "throughput >= 1/s"}},
		Baseline:   &plan.Baseline{Path: "b.json", Metrics: []string{"throughput"}},
	}, run, base).Checks
	for _, ch := range checks {
		compared := ch.Kind == KindThreshold && ch.Point == "a/c=1"
		if ch.NoValue == compared {
			t.Errorf("%s %s @ %s (%s): no_value %v", ch.Kind, ch.Name, ch.Point, ch.Status, ch.NoValue)
		}
	}
}
