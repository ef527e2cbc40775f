package search

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// machine is the disturbance of every window at a level.
type machine func(level float64) *result.Disturbance

func quietAt(float64) *result.Disturbance {
	w := 0.05
	return &result.Disturbance{OtherCPU: 0.03, Load1: 0.5, RunQueueWait: &w}
}

// busyAt makes the windows at level busy with d, the others quiet.
func busyAt(level float64, d result.Disturbance) machine {
	return func(v float64) *result.Disturbance {
		if v == level {
			return &d
		}
		return quietAt(v)
	}
}

// driveAborting plays the engine for the delay model's search of
// p90 < 48ms (10 ms a request, one at a time: c × 10 ms) with abort_on
// p99 > 200ms: a probe whose p99 is over 200 ms, and the probe at abortAt
// (two windows at 308 ms, confirmed), are stopped; every window's
// disturbance comes from m.
func driveAborting(t *testing.T, m machine, abortAt float64) *result.SearchOutcome {
	t.Helper()
	pl := searchPlan(plan.SearchBinary, plan.DecideInterval, 1, 32, 1, "p90<48ms", 48000)
	pl.Searches[0].Condition.Metric = plan.MetricP90
	pl.AbortOn = []plan.Threshold{{Text: "p99 > 200ms", Metric: plan.MetricP99, Op: ">", Value: 200000}}
	c := New(pl)
	run := &result.Run{Environment: result.Environment{NumCPU: 2}}
	for step := 0; step < 100; step++ {
		next := c.Next(run)
		if next.Point == nil {
			if next.More != "" {
				t.Fatalf("more trials of %s: the model is exact", next.More)
			}
			return outcome(t, c.Attach(run))
		}
		lvl := float64(next.Point.Load.Concurrency)
		p := result.Point{ID: next.Point.ID, Model: "m", Search: next.Point.Search, Status: result.PointStable}
		lat, n := lvl*10000, 6
		if lvl == abortAt {
			lat = 308000
		}
		if lat > 200000 {
			p.Status, n = result.PointAborted, 2
		}
		for i := 0; i < n; i++ {
			d := m(lvl)
			met := result.Metrics{Requests: 50, P90Us: lat, P99Us: lat, P50Us: lat, LatencyAvgUs: lat}
			p.Trials = append(p.Trials, result.Trial{Index: i, Duration: time.Second, Metrics: met, Disturbance: d})
			p.Windows = append(p.Windows, result.Window{Index: i, Kept: true, LatencyUs: lat, Requests: 50, Disturbance: d})
		}
		p.Summary = p.Trials[0].Metrics
		run.Points = append(run.Points, p)
	}
	t.Fatal("the search did not end")
	return nil
}

func probes(o *result.SearchOutcome) string {
	var out []string
	for _, p := range o.Probes {
		out = append(out, fmt.Sprintf("%g:%s", p.Level, p.Outcome))
	}
	return strings.Join(out, " ")
}

// A probe abort_on stopped is a judgement on the build only when the
// machine was not disturbed as it tripped: too busy outright, or markedly
// busier than during the search's earlier probes. Otherwise it is
// "disturbed": counted as failing (the search goes on below it), but
// unjudged, with the contention named, so the checks of the value found
// say the answer may be higher.
func TestAbortedProbeOnADisturbedMachine(t *testing.T) {
	wait := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		m       machine
		probes  string
		because string
	}{
		{"quiet machine: a hopeless load", quietAt,
			"1:meets 32:aborted 16:fails 8:fails 4:aborted 2:meets 3:meets", ""},
		{"too busy: load 15 on 2 CPUs, others 93%", busyAt(4, result.Disturbance{OtherCPU: 0.93, Load1: 15.2, RunQueueWait: wait(0.9)}),
			"1:meets 32:aborted 16:fails 8:fails 4:disturbed 2:meets 3:meets",
			"the machine was too busy: load average 15.2 on 2 CPUs, other processes used 93% of the CPUs, perfscen's threads waited for a CPU 90% as long as they ran"},
		{"busier than the earlier probes", busyAt(4, result.Disturbance{OtherCPU: 0.2, Load1: 1, RunQueueWait: wait(0.3)}),
			"1:meets 32:aborted 16:fails 8:fails 4:disturbed 2:meets 3:meets",
			"the machine was busier than during the search's earlier probes: other processes used 20% of the CPUs against 3%, perfscen's run-queue wait 30% of its run time against 5%"},
		{"a little busier: still the build's", busyAt(4, result.Disturbance{OtherCPU: 0.1, Load1: 1, RunQueueWait: wait(0.1)}),
			"1:meets 32:aborted 16:fails 8:fails 4:aborted 2:meets 3:meets", ""},
		// perfscen's own threads (and a server on the machine) contend
		// more at a higher load: 32 waits far more than 1 did, which is
		// its load's doing, and 4 is compared with 32, 16 and 8 only.
		{"contention that grows with the load is the load's own", func(v float64) *result.Disturbance {
			return &result.Disturbance{OtherCPU: 0.03 + v/400, Load1: v / 4, RunQueueWait: wait(v / 40)}
		}, "1:meets 32:aborted 16:fails 8:fails 4:aborted 2:meets 3:meets", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := driveAborting(t, tc.m, 4)
			if probes(o) != tc.probes || o.Value != 3 {
				t.Fatalf("probes %s, value %g; want %s, 3", probes(o), o.Value, tc.probes)
			}
			at4 := o.Probes[4]
			if at4.Disturbance != tc.because {
				t.Errorf("disturbance %q, want %q", at4.Disturbance, tc.because)
			}
			if tc.because != "" && !strings.Contains(o.Message, "4 does not (disturbed: stopped by abort_on while the machine was disturbed ("+tc.because) {
				t.Errorf("message: %s", o.Message)
			}
		})
	}
	// The first probe has no earlier ones: only a machine too busy
	// outright makes its stop unjudged.
	busy := result.Disturbance{OtherCPU: 0.93, Load1: 15.2}
	if o := driveAborting(t, busyAt(1, busy), 1); probes(o) != "1:disturbed" || o.Found {
		t.Errorf("first probe, too busy: %s", probes(o))
	}
	if o := driveAborting(t, busyAt(1, result.Disturbance{OtherCPU: 0.2, Load1: 1}), 1); probes(o) != "1:aborted" {
		t.Errorf("first probe, a little busy: %s", probes(o))
	}
}
