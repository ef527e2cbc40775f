package result

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

func trialsPoint(tps ...float64) *Point {
	p := &Point{ID: "m/c=1", Status: PointStable}
	for i, tp := range tps {
		m := Metrics{Throughput: tp, Requests: 100, Errors: int64(i), P50Us: 1000 / tp * 100, P99Us: 2000, LatencyMaxUs: float64(3000 + i),
			Server: &ServerStats{RequestCount: 100, QueueUs: float64(10 * (i + 1))}}
		p.Trials = append(p.Trials, Trial{Index: i, Metrics: m})
	}
	// perf_analyzer's pooled merge, deliberately not the median.
	p.Summary = Metrics{Throughput: 555, Requests: int64(100 * len(tps)), Errors: 10, ErrorRate: 0.02, P50Us: 7, P99Us: 9,
		LatencyMaxUs: 3004, Server: &ServerStats{RequestCount: int64(100 * len(tps)), QueueUs: 99}}
	return p
}

// The figure of a point is the median of its kept trials for throughput
// and times, the pooled total for errors and the largest for maxima, and
// what was reported for a point without trials.
func TestFigure(t *testing.T) {
	p := trialsPoint(600, 500, 900, 450, 880)
	median := 600.0
	for _, tc := range []struct {
		metric string
		want   float64
		stat   string
	}{
		{plan.MetricThroughput, 600, StatMedian},
		{plan.MetricP50, 1000 / median * 100, StatMedian},
		{plan.MetricServerQueue, 30, StatMedian},
		{plan.MetricErrors, 10, StatPooled},
		{plan.MetricErrorRate, 0.02, StatPooled},
		{plan.MetricLatencyMax, 3004, StatPooled},
	} {
		f, ok := p.Figure(tc.metric)
		if !ok || f.Value != tc.want || f.Stat != tc.stat || f.Trials != 5 {
			t.Errorf("%s: %+v %v, want %g (%s of 5)", tc.metric, f, ok, tc.want, tc.stat)
		}
	}
	if got := p.FigureMetrics(); got.Requests != 500 || got.Server.RequestCount != 500 || got.Server.QueueUs != 30 {
		t.Errorf("figures: requests %d, server %+v", got.Requests, *got.Server)
	}
	if p.Summary.Throughput != 555 || p.Summary.Server.QueueUs != 99 {
		t.Error("Figures changed the point's summary")
	}
	if l := (Figure{Stat: StatMedian, Trials: 5}).Label(); l != "median of 5 kept trials" {
		t.Errorf("label %q", l)
	}

	imported := &Point{Status: PointImported, Summary: Metrics{Throughput: 321, P50Us: 12}}
	if f, ok := imported.Figure(plan.MetricThroughput); !ok || f.Value != 321 || f.Stat != StatReported {
		t.Errorf("imported: %+v", f)
	}
}

// The JSON documents carry each point's figures; reading one back
// recomputes them rather than trusting the copy.
func TestFiguresInJSON(t *testing.T) {
	run := &Run{Scenario: "s", Source: "perfscen", Status: StatusComplete, Points: []Point{*trialsPoint(600, 500, 900)}}
	b, err := Encode(run)
	if err != nil {
		t.Fatal(err)
	}
	if run.Points[0].Figures != nil {
		t.Fatal("Encode changed the run")
	}
	back, err := Decode("r.json", b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Points[0].Figures != nil {
		t.Fatal("decoded figures kept")
	}
	written := WithFigures(run).Points[0].Figures
	if written == nil || written.Throughput != 600 {
		t.Fatalf("written figures %+v", written)
	}
}

// The latency standard deviation and minimum printed beside the figures
// are figures too: the median of the trials' own deviations and the least
// minimum, never perf_analyzer's pooled merge, which adds the drift
// between windows to the deviation.
func TestSpreadFigures(t *testing.T) {
	p := trialsPoint(600, 500, 900, 450, 880)
	for i, sd := range []float64{120, 90, 300, 100, 110} {
		p.Trials[i].Metrics.LatencyStdUs = sd
		p.Trials[i].Metrics.LatencyMinUs = 800 + 10*float64(i)
	}
	// A trial where nothing completed has no spread to count.
	p.Trials = append(p.Trials, Trial{Index: 5, Metrics: Metrics{Errors: 3}})
	p.Summary.LatencyStdUs, p.Summary.LatencyMinUs = 450, 500
	got := p.FigureMetrics()
	if got.LatencyStdUs != 110 {
		t.Errorf("standard deviation %g, want the trials' median 110 (pooled %g)", got.LatencyStdUs, p.Summary.LatencyStdUs)
	}
	if got.LatencyMinUs != 800 {
		t.Errorf("minimum %g, want the least of the trials' 800 (pooled %g)", got.LatencyMinUs, p.Summary.LatencyMinUs)
	}
	imported := &Point{Status: PointImported, Summary: Metrics{P50Us: 12, LatencyStdUs: 7, LatencyMinUs: 3}}
	if got := imported.FigureMetrics(); got.LatencyStdUs != 7 || got.LatencyMinUs != 3 {
		t.Errorf("imported: std %g min %g, want what the file reported", got.LatencyStdUs, got.LatencyMinUs)
	}
}
