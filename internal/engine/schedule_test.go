package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// delayModel serves the delay model with a 10 ms service time: on the fake
// clock a request at concurrency c takes c × 10 ms, exactly.
var delayModel = map[string]map[string]string{"delay": {"delay": "10ms"}}

func delayPlan(addr string, m plan.Measurement, pts ...plan.Point) *plan.Plan {
	return testPlan(addr, plan.ProtocolHTTP, m, []plan.Model{{Alias: "m", Name: "delay"}}, pts...)
}

// A schedule adds points after the plan's, one at a time, and can ask for
// more kept trials of one it measured; the run ends when it asks nothing.
func TestScheduleAddsPointsAndTrials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"}, ModelParams: delayModel})
		c := newClient(t, plan.ProtocolHTTP, srv.HTTPAddr())
		p := delayPlan(srv.HTTPAddr(), loose(), plan.Point{ID: "m/c=1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		var asked []int
		steps := []Next{
			{Point: &plan.Point{ID: "m/probe/c=2", Model: "m", BatchSize: 1, Search: "probe", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}}},
			{More: "m/probe/c=2", Trials: 2},
			{Point: &plan.Point{ID: "m/probe/c=4", Model: "m", BatchSize: 1, Search: "probe", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4}}},
		}
		sched := func(run *result.Run) Next {
			asked = append(asked, len(run.Points))
			if len(steps) == 0 {
				return Next{}
			}
			n := steps[0]
			steps = steps[1:]
			return n
		}
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{Schedule: sched})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Points) != 1 {
			t.Errorf("the caller's plan grew to %d points", len(p.Points))
		}
		ids := []string{}
		for _, pt := range run.Points {
			ids = append(ids, pt.ID)
		}
		if strings.Join(ids, " ") != "m/c=1 m/probe/c=2 m/probe/c=4" || fmt.Sprint(asked) != "[1 2 2 3]" {
			t.Fatalf("points %v, schedule asked with %v points", ids, asked)
		}
		if run.Points[1].Search != "probe" || run.Points[0].Search != "" {
			t.Errorf("the probe is not marked as one: %q, %q", run.Points[0].Search, run.Points[1].Search)
		}
		if n := len(run.Points[1].Trials); n != 5 {
			t.Errorf("probe c=2 kept %d trials, want 3 + 2", n)
		}
		if got := run.Points[2].Summary.P50Us; got < 39000 || got > 41000 {
			t.Errorf("c=4 on a 10 ms model: p50 %v us, want 40 ms", got)
		}
	})
}

// An abort condition met by a window stops that point there and, for a
// point of the sweep, the run: the next point is never measured. A probe
// of a search stops alone.
func TestAbortStopsPointAndRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"}, ModelParams: delayModel})
		c := newClient(t, plan.ProtocolHTTP, srv.HTTPAddr())
		p := delayPlan(srv.HTTPAddr(), loose(),
			plan.Point{ID: "m/c=1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}},
			plan.Point{ID: "m/c=8", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 8}},
			plan.Point{ID: "m/c=16", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 16}})
		abort := func(pt *plan.Point, w *result.Window, met *result.Metrics) (string, bool) {
			if met.P99Us > 50000 {
				return "p99 over 50ms", true
			}
			return "", false
		}
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{Abort: abort})
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Points) != 2 {
			t.Fatalf("%d points measured, want the run stopped after m/c=8", len(run.Points))
		}
		if st := run.Points[0].Status; st != result.PointStable {
			t.Errorf("m/c=1 (p99 10 ms) is %s, want stable", st)
		}
		pt := run.Points[1]
		if pt.Status != result.PointAborted || len(pt.Windows) != 1 || len(pt.Trials) != 1 {
			t.Errorf("m/c=8: %s after %d window(s), %d trial(s); want aborted at its first window", pt.Status, len(pt.Windows), len(pt.Trials))
		}
		if !strings.Contains(strings.Join(run.Notes, "\n"), "stopped early: p99 over 50ms at m/c=8") {
			t.Errorf("notes: %v", run.Notes)
		}
	})
}

// A stage ramps its load window by window to its target and keeps every
// window; a held stage runs one session at its target.
func TestStageRampsAndHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"}, ModelParams: delayModel})
		c := newClient(t, plan.ProtocolHTTP, srv.HTTPAddr())
		m := loose()
		m.Window = time.Second
		p := delayPlan(srv.HTTPAddr(), m,
			plan.Point{ID: "m/stage=1", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4},
				Stage: &plan.Stage{Index: 1, Duration: 4 * time.Second, From: 0, To: 4}},
			plan.Point{ID: "m/stage=2", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4},
				Stage: &plan.Stage{Index: 2, Duration: 3 * time.Second, From: 4, To: 4}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ramp, hold := run.Points[0], run.Points[1]
		if ramp.Status != result.PointStable || len(ramp.Trials) != 4 || hold.Status != result.PointStable || len(hold.Trials) != 3 {
			t.Fatalf("ramp %s %d trials, hold %s %d trials; want 4 and 3 windows kept", ramp.Status, len(ramp.Trials), hold.Status, len(hold.Trials))
		}
		// Concurrency 1, 2, 3, 4 on a 10 ms model: about 10, 20, 30, 40 ms.
		for i, tr := range ramp.Trials {
			want := float64(10000 * (i + 1))
			if got := tr.Metrics.P50Us; got < want*0.9 || got > want*1.1 {
				t.Errorf("ramp window %d: p50 %v us, want about %v", i, got, want)
			}
		}
		if got := hold.Summary.P50Us; got < 36000 || got > 44000 {
			t.Errorf("held stage p50 %v us, want about 40 ms", got)
		}
		if p.Points[0].Load.Concurrency != 4 {
			t.Errorf("the ramp changed the caller's plan: concurrency %d", p.Points[0].Load.Concurrency)
		}
	})
}
