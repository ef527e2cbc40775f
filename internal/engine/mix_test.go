package engine

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// sharedDevice gives two models one device: an execution of either waits
// for the other's, as two models on one GPU do.
var sharedDevice = map[string]map[string]string{
	"simple": {"added_latency": "10ms", "device": "gpu0"},
	"delay":  {"delay": "10ms", "device": "gpu0"},
}

// mixPlan is b alone and b with a busy beside it, compared (one group),
// with the members of each mix step joined by Together.
func mixPlan(addr string) *plan.Plan {
	m := loose()
	m.Window = 200 * time.Millisecond
	models := []plan.Model{
		{Alias: "alone/b", Name: "simple", Mix: "alone", Base: "b"},
		{Alias: "busy/a", Name: "delay", Mix: "busy", Base: "a"},
		{Alias: "busy/b", Name: "simple", Mix: "busy", Base: "b"},
	}
	conc := func(n int) plan.Load { return plan.Load{Mode: plan.LoadConcurrency, Concurrency: n} }
	p := testPlan(addr, "http", m, models,
		plan.Point{ID: "alone/b/c=1", Model: "alone/b", Mix: "alone", Together: 1, Group: 1, Load: conc(1)},
		plan.Point{ID: "busy/a/c=2", Model: "busy/a", Mix: "busy", Together: 2, Group: 1, Load: conc(2)},
		plan.Point{ID: "busy/b/c=1", Model: "busy/b", Mix: "busy", Together: 2, Group: 1, Load: conc(1)})
	p.Mixes = []plan.Mix{{Name: "alone", Members: []string{"alone/b"}}, {Name: "busy", Members: []string{"busy/a", "busy/b"}}}
	return p
}

// A mix runs its members at the same time on one clock: their windows have
// the same bounds, they are kept together, interleaved with the mix they
// are compared with, and the whole mix's figures are the members' merged.
// With the two models on one device, b's latency with a busy beside it is
// b's own service time plus a's executions it waits behind.
func TestMixRunsMembersTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple", "delay"}, ModelParams: sharedDevice})
		c := newClient(t, "http", srv.HTTPAddr())
		p := mixPlan(srv.HTTPAddr())
		var seq []int
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, mixInputs)}, Options{
			Progress: func(e Event) {
				if e.Kind == WindowDone {
					seq = append(seq, e.Index)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, pt := range run.Points {
			ids = append(ids, pt.ID)
		}
		if want := []string{"alone/b/c=1", "busy/a/c=2", "busy/b/c=1", "busy/all"}; !slices.Equal(ids, want) {
			t.Fatalf("points %v, want %v", ids, want)
		}
		// alone stabilizes (3 windows), busy stabilizes with both members
		// reporting each window, then rounds (alone, busy), (busy, alone),
		// (alone, busy).
		want := []int{0, 0, 0, 1, 2, 1, 2, 1, 2, 0, 1, 2, 1, 2, 0, 0, 1, 2}
		if !slices.Equal(seq, want) {
			t.Fatalf("window order %v, want %v", seq, want)
		}
		alone, a, b, all := run.Points[0], run.Points[1], run.Points[2], run.Points[3]
		for _, pt := range []result.Point{alone, a, b} {
			if pt.Status != result.PointStable || len(pt.Trials) != 3 {
				t.Fatalf("%s: %s with %d trials", pt.ID, pt.Status, len(pt.Trials))
			}
			checkPointConsistency(t, &pt, 1)
		}
		for i := range a.Windows {
			if a.Windows[i].Duration != b.Windows[i].Duration || a.Windows[i].Kept != b.Windows[i].Kept {
				t.Errorf("window %d: a %+v, b %+v", i, a.Windows[i], b.Windows[i])
			}
		}
		for i := range a.Trials {
			if !a.Trials[i].Start.Equal(b.Trials[i].Start) {
				t.Errorf("trial %d starts at %v for a, %v for b", i, a.Trials[i].Start, b.Trials[i].Start)
			}
			at, bt, tt := a.Trials[i].Metrics, b.Trials[i].Metrics, all.Trials[i].Metrics
			if tt.Requests != at.Requests+bt.Requests || tt.Throughput != at.Throughput+bt.Throughput {
				t.Errorf("trial %d: whole mix %d requests %.1f/s, members %d+%d, %.1f+%.1f/s", i, tt.Requests, tt.Throughput, at.Requests, bt.Requests, at.Throughput, bt.Throughput)
			}
			if tt.Server == nil || tt.Server.RequestCount != at.Server.RequestCount+bt.Server.RequestCount {
				t.Errorf("trial %d: whole mix server %+v", i, tt.Server)
			}
		}
		if all.Mix != "busy" || all.Model != "busy" || b.Mix != "busy" || all.Status != result.PointStable {
			t.Errorf("whole mix %q/%q %s, member mix %q", all.Model, all.Mix, all.Status, b.Mix)
		}
		// Alone b takes its 10 ms; beside a (two requests always queued
		// for the device) it waits for a's executions too.
		t.Logf("alone b p50 %.0f, busy b p50 %.0f, a p50 %.0f, all %.1f/s", alone.Summary.P50Us, b.Summary.P50Us, a.Summary.P50Us, all.Summary.Throughput)
		if alone.Summary.P50Us > 11000 || b.Summary.P50Us < 1.9*alone.Summary.P50Us {
			t.Errorf("b p50 alone %.0f µs, beside a %.0f µs", alone.Summary.P50Us, b.Summary.P50Us)
		}
	})
}

// mixInputs feeds a (the delay model) FP32 and the others the simple
// model's data.
func mixInputs(pt *plan.Point) (*inputdata.Data, error) {
	if pt.Model == "busy/a" {
		return fp32Data(1), nil
	}
	return simpleData(1, 1), nil
}

// Extra trials asked for one member extend its whole mix, interleaved with
// the mix it is compared with: the neighbour is the member's load, and the
// whole mix's figures keep one trial per window of its members.
func TestMixExtendsAsAUnit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple", "delay"}, ModelParams: sharedDevice})
		c := newClient(t, "http", srv.HTTPAddr())
		p := mixPlan(srv.HTTPAddr())
		asked := 0
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, mixInputs)}, Options{
			Extend: func(*result.Run) ([]string, int) {
				asked++
				if asked > 1 {
					return nil, 0
				}
				return []string{"busy/b/c=1", "alone/b/c=1"}, 2
			}})
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range run.Points {
			if len(pt.Trials) != 5 {
				t.Errorf("%s: %d trials, want 3 + 2", pt.ID, len(pt.Trials))
			}
		}
		a, b := run.Points[1], run.Points[2]
		for i := range a.Trials {
			if !a.Trials[i].Start.Equal(b.Trials[i].Start) {
				t.Errorf("trial %d of the mix: a at %v, b at %v", i, a.Trials[i].Start, b.Trials[i].Start)
			}
		}
	})
}
