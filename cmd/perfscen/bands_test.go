package main

import (
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/result"
)

func bandRun(tp float64) *result.Run {
	p := result.Point{ID: "m/c=1", Model: "m", Status: result.PointStable}
	for i := 0; i < 3; i++ {
		p.Trials = append(p.Trials, result.Trial{Index: i, Metrics: result.Metrics{Requests: 10, Throughput: tp + float64(i), P50Us: 100}})
	}
	return &result.Run{SchemaVersion: 1, Scenario: "s", Status: result.StatusComplete,
		Environment: result.Environment{Testbed: "tb"}, Points: []result.Point{p}}
}

// The HTML plot's baseline band spans the history's run medians of
// throughput, per point, for the run's own testbed only.
func TestBandsFromBaseline(t *testing.T) {
	if bands(nil, bandRun(100)) != nil {
		t.Fatal("bands without a baseline")
	}
	f := baseline.New("s")
	for i, tp := range []float64{100, 110, 90} {
		if _, err := baseline.Update(f, bandRun(tp), baseline.UpdateOptions{Now: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	got := bands(f, bandRun(100))
	if len(got) != 1 || got[0].Point != "m/c=1" || got[0].Lo != 91 || got[0].Hi != 111 {
		t.Fatalf("bands = %+v, want m/c=1 from 91 to 111 (medians of the three runs)", got)
	}
	other := bandRun(100)
	other.Environment.Testbed = "elsewhere"
	if b := bands(f, other); b != nil {
		t.Fatalf("bands for another testbed: %+v", b)
	}
}
