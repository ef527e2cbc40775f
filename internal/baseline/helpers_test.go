package baseline

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/runner/result"
)

// runSeq gives every built run its own start time: real runs never share
// one, and a history refuses the same run twice.
var runSeq atomic.Int64

// mkRun builds a complete run with points "m/c=N" for each level, ten
// trials each, throughput level·1000·(1±small) and p95 20ms/level.
func mkRun(scenario string, levels ...float64) *result.Run {
	r := &result.Run{SchemaVersion: 1, Scenario: scenario, Source: "perfscen", Status: result.StatusComplete,
		ScenarioHash: "h1", Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(runSeq.Add(1)) * time.Millisecond),
		Environment: result.Environment{Testbed: "tb1", Host: "ci-1"}}
	for i, lv := range levels {
		p := result.Point{ID: fmt.Sprintf("m/c=%d", i+1), Model: "m", Status: result.PointStable,
			Coords: map[string]string{"concurrency": fmt.Sprint(i + 1)}}
		for j := 0; j < 10; j++ {
			f := 1 + 0.01*float64(j%5-2)/2
			p.Trials = append(p.Trials, result.Trial{Index: j, Metrics: result.Metrics{
				Throughput: 1000 * lv * f, Requests: 100, P50Us: 10000 / lv / f, P90Us: 18000 / lv / f,
				P95Us: 20000 / lv / f, P99Us: 30000 / lv / f, LatencyAvgUs: 11000 / lv / f}})
		}
		p.Summary = p.Trials[2].Metrics
		r.Points = append(r.Points, p)
	}
	return r
}
