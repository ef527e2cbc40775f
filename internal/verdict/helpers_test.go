package verdict

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/perfscen/perfscen/internal/stats"

	"github.com/perfscen/perfscen/runner/result"
)

// trialSet is per-trial throughput (infer/s) and p95 (µs); other latency
// figures are derived from p95 so every metric has data.
type trialSet struct{ tp, p95 []float64 }

func mkPoint(id, model string, coords map[string]string, ts trialSet) result.Point {
	p := result.Point{ID: id, Model: model, ModelName: model, Coords: coords, Status: result.PointStable}
	for i := range ts.tp {
		lat := ts.p95[i]
		m := result.Metrics{Throughput: ts.tp[i], Requests: 1000, P50Us: lat * 0.6, P90Us: lat * 0.9,
			P95Us: lat, P99Us: lat * 1.3, LatencyAvgUs: lat * 0.65, LatencyMaxUs: lat * 2}
		p.Trials = append(p.Trials, result.Trial{Index: i, Duration: time.Second, Metrics: m})
	}
	p.Summary = result.Metrics{Requests: int64(1000 * len(ts.tp))}
	if len(ts.tp) > 0 {
		p.Summary.Throughput = stats.Median(ts.tp)
		lat := stats.Median(ts.p95)
		p.Summary.P50Us, p.Summary.P90Us, p.Summary.P95Us, p.Summary.P99Us = lat*0.6, lat*0.9, lat, lat*1.3
		p.Summary.LatencyAvgUs = lat * 0.65
	}
	return p
}

// constant returns n trials at tp infer/s and lat µs with a small
// deterministic spread (±1%).
func constant(n int, tp, lat float64) trialSet {
	var ts trialSet
	for i := 0; i < n; i++ {
		f := 1 + 0.01*float64(i%5-2)/2
		ts.tp = append(ts.tp, tp*f)
		ts.p95 = append(ts.p95, lat/f)
	}
	return ts
}

func mkRun(points ...result.Point) *result.Run {
	return &result.Run{SchemaVersion: result.SchemaVersion, Scenario: "demo", Source: "perfscen",
		Status: result.StatusComplete, Environment: result.Environment{Testbed: "tb1"}, Points: points}
}

func c(n int) map[string]string { return map[string]string{"concurrency": fmt.Sprint(n)} }

// noisy returns n trials around tp and lat with normal trial noise of
// relative size cv.
func noisy(rng *rand.Rand, n int, tp, lat, cv float64) trialSet {
	var ts trialSet
	for i := 0; i < n; i++ {
		ts.tp = append(ts.tp, tp*(1+cv*rng.NormFloat64()))
		ts.p95 = append(ts.p95, lat*(1+cv*rng.NormFloat64()))
	}
	return ts
}
