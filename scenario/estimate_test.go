package scenario

import (
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

func TestEstimate(t *testing.T) {
	tests := []struct {
		name        string
		m           plan.Measurement
		loads       []plan.Load
		total, wrst time.Duration
	}{
		{
			name:  "time windows",
			m:     plan.Measurement{Mode: plan.TimeWindows, Window: time.Second, MaxTrials: 6, Trials: 5, Warmup: 2 * time.Second},
			loads: []plan.Load{{Mode: plan.LoadConcurrency, Concurrency: 1}, {Mode: plan.LoadConcurrency, Concurrency: 2}},
			total: 2 * (2 + 8) * time.Second, wrst: 2 * (2 + 11) * time.Second,
		},
		{
			name:  "count windows at a request rate: 500 requests at 250/s = 2s windows",
			m:     plan.Measurement{Mode: plan.CountWindows, RequestCount: 500, MaxTrials: 10, Trials: 10},
			loads: []plan.Load{{Mode: plan.LoadRequestRate, Rate: 250}},
			total: 13 * 2 * time.Second, wrst: 20 * 2 * time.Second,
		},
		{
			name:  "count windows last at least 1s",
			m:     plan.Measurement{Mode: plan.CountWindows, RequestCount: 50, MaxTrials: 10, Trials: 1},
			loads: []plan.Load{{Mode: plan.LoadConcurrency, Concurrency: 8}},
			total: 4 * time.Second, wrst: 11 * time.Second,
		},
		{
			name:  "iterations: 1000 requests at concurrency 4 = 2.5s",
			m:     plan.Measurement{Mode: plan.TimeWindows, Window: time.Second, MaxTrials: 10, Trials: 10},
			loads: []plan.Load{{Mode: plan.LoadIterations, Concurrency: 4, Iterations: 900, WarmupIterations: 100}},
			total: 2500 * time.Millisecond, wrst: 2500 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plan.Plan{Measurement: tt.m}
			for _, l := range tt.loads {
				p.Points = append(p.Points, plan.Point{Load: l})
			}
			e := Estimate(p)
			if e.Total != tt.total || e.Worst != tt.wrst {
				t.Errorf("total, worst = %v, %v; want %v, %v", e.Total, e.Worst, tt.total, tt.wrst)
			}
			if len(e.PerPoint) != len(p.Points) || e.Assumption == "" {
				t.Errorf("estimate incomplete: %+v", e)
			}
		})
	}
}

// The shipped demos must stay short: quickstart under a minute, the engine
// comparison under 90 s, at best.
func TestExampleDurations(t *testing.T) {
	for file, limit := range map[string]time.Duration{
		"../scenarios/quickstart.yaml":        60 * time.Second,
		"../scenarios/engine-comparison.yaml": 90 * time.Second,
	} {
		p, err := LoadPlan(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := Estimate(p); e.Total > limit {
			t.Errorf("%s: estimated %v, want under %v", file, e.Total, limit)
		}
	}
}

func TestSearchProbes(t *testing.T) {
	tests := []struct {
		s           plan.Search
		least, most int
	}{
		{plan.Search{Method: plan.SearchBinary, Start: 1, End: 32, Step: 1}, 1, 7},
		{plan.Search{Method: plan.SearchBinary, Start: 8, End: 128, Step: 8}, 1, 6},
		{plan.Search{Method: plan.SearchBinary, Start: 4, End: 4, Step: 1}, 1, 1},
		{plan.Search{Method: plan.SearchLinear, Start: 1, End: 8, Step: 1}, 1, 8},
		{plan.Search{Method: plan.SearchLinear, Start: 1, End: 0, Step: 1}, 1, 20},
	}
	for _, tc := range tests {
		if l, m := SearchProbes(&tc.s); l != tc.least || m != tc.most {
			t.Errorf("%+v: %d..%d probes, want %d..%d", tc.s, l, m, tc.least, tc.most)
		}
	}
}

// The worst case includes the extra trials the gate may add for checks
// that stay undecided, capped by max_extra_time; a plan without
// comparisons or a baseline gets none.
func TestEstimateExtraTrials(t *testing.T) {
	m := plan.Measurement{Mode: plan.TimeWindows, Window: time.Second, MaxTrials: 6, Trials: 10}
	pts := []plan.Point{{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}}, {Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}}}
	for _, tt := range []struct {
		name  string
		gate  plan.Gate
		cmp   bool
		extra time.Duration
	}{
		{"no undecidable checks", plan.Gate{MaxExtraTrials: 20, MaxExtraTime: 3 * time.Minute}, false, 0},
		{"20 extra trials of 1s at 2 points", plan.Gate{MaxExtraTrials: 20, MaxExtraTime: 3 * time.Minute}, true, 40 * time.Second},
		{"capped by max_extra_time", plan.Gate{MaxExtraTrials: 20, MaxExtraTime: 30 * time.Second}, true, 30 * time.Second},
	} {
		p := &plan.Plan{Measurement: m, Points: pts, Checks: plan.Checks{Gate: tt.gate}}
		if tt.cmp {
			p.Checks.Comparisons = []plan.Comparison{{Name: "c"}}
		}
		e := Estimate(p)
		if e.Extra != tt.extra || e.Worst != 2*16*time.Second+tt.extra {
			t.Errorf("%s: extra %s worst %s, want %s and %s", tt.name, e.Extra, e.Worst, tt.extra, 2*16*time.Second+tt.extra)
		}
	}
}
