package engine

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// On the fake clock every window of a and b holds the same requests, so
// both stabilize in their first three windows and the order of windows is
// exact, not a lower bound.
func TestRunInterleavesGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		models := []plan.Model{{Alias: "a", Name: "simple"}, {Alias: "b", Name: "simple"}}
		p := testPlan(srv.HTTPAddr(), "http", loose(), models,
			plan.Point{Model: "a", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}},
			plan.Point{Model: "solo", Load: plan.Load{Mode: plan.LoadIterations, Iterations: 5}},
			plan.Point{Model: "b", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		p.Models = append(p.Models, plan.Model{Alias: "solo", Name: "simple"})
		var seq []int
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{
			Progress: func(e Event) {
				if e.Kind == WindowDone {
					seq = append(seq, e.Index)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		// Results stay in plan order.
		var ids []string
		for _, pt := range run.Points {
			ids = append(ids, pt.ID)
		}
		if !slices.Equal(ids, []string{"p0", "p1", "p2"}) {
			t.Fatalf("points %v", ids)
		}
		// Group first (a stabilizes in three windows, b too, then rounds
		// a b, b a, a b), then the ungrouped point.
		if want := []int{0, 0, 0, 2, 2, 2, 0, 2, 2, 0, 0, 2, 1}; !slices.Equal(seq, want) {
			t.Fatalf("window order %v, want %v", seq, want)
		}
		for _, i := range []int{0, 2} {
			pt := run.Points[i]
			if pt.Status != result.PointStable || len(pt.Trials) != 3 {
				t.Errorf("%s: status %s, %d trials", pt.ID, pt.Status, len(pt.Trials))
			}
			for j, w := range pt.Windows {
				if w.Kept != (j >= len(pt.Windows)-3) {
					t.Errorf("%s: window %d kept=%v", pt.ID, j, w.Kept)
				}
			}
			checkPointConsistency(t, &pt, 1)
		}
	})
}

// fakeLatency gives the simple model a service time: on synctest's fake
// clock a closed loop against a model that takes no time would never let
// the clock move.
var fakeLatency = map[string]map[string]string{"simple": {"added_latency": "1ms"}}

func TestRunCounterResetIsMarked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		addr := srv.HTTPAddr()
		c := newClient(t, "http", addr)
		m := loose()
		m.StabilityPct, m.Trials = 1e6, 4
		// The old counters include the warm-up, so they are well ahead of
		// what the fresh ones can reach in one window: they must go
		// backwards.
		m.Warmup = 400 * time.Millisecond
		p := testPlan(addr, "http", m, []plan.Model{{Alias: "m", Name: "simple"}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{
			Progress: func(e Event) {
				if e.Kind == WindowDone && e.Window.Index == 1 {
					// Reloading restarts the model's counters from zero, as
					// a server restart does, without dropping connections.
					if err := srv.LoadModel("simple"); err != nil {
						t.Error(err)
					}
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		if len(pt.Trials) != 4 {
			t.Fatalf("%d trials, want 4", len(pt.Trials))
		}
		// The reload lands after window 1 closed and before window 2's
		// first snapshot, so exactly the trial of window 2 is marked.
		for i, tr := range pt.Trials {
			s := tr.Metrics.Server
			if s == nil {
				t.Fatalf("trial %d has no server stats", i)
			}
			if s.Reset != (i == 2) {
				t.Errorf("trial %d: reset %v", i, s.Reset)
			}
			if s.RequestCount < 0 || s.QueueUs < 0 || s.AvgRequestUs < 0 || s.InferenceCount < 0 {
				t.Errorf("trial %d negative figures: %+v", i, s)
			}
		}
		if !pt.Summary.Server.Reset {
			t.Error("summary hides the restart")
		}
	})
}

func TestRunScrapesGPUMetrics(t *testing.T) {
	body, err := os.ReadFile("testdata/triton_metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		metrics := startMetrics(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple"}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		p.Servers[0].MetricsURL = metrics
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1))), MetricsClient: metricsClient(t)},
			Options{MetricsInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		for _, tr := range pt.Trials {
			// A 100 ms window holds ten 10 ms scrapes.
			if tr.Metrics.GPU == nil {
				t.Errorf("trial %d has no GPU figures", tr.Index)
			}
		}
		g := pt.Summary.GPU
		if g == nil || g.UtilizationAvg != 0.375 || g.MemoryUsedMax != 5e9 || g.PowerAvgWatts != 180.5 {
			t.Errorf("gpu = %+v", g)
		}
		if run.Environment.GPU != "GPU-aaaa,GPU-bbbb" {
			t.Errorf("environment GPU %q", run.Environment.GPU)
		}
	})
}

// Extend adds kept trials to the points it names, interleaved, while the
// server is still up; it is asked again after each extension, and a point
// it does not name keeps its trials. On the fake clock no window of the
// extension ends before a request did, so none is passed over and the
// window order is exact.
func TestRunExtendAddsInterleavedTrials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		models := []plan.Model{{Alias: "a", Name: "simple"}, {Alias: "b", Name: "simple"}, {Alias: "c", Name: "simple"}}
		p := testPlan(srv.HTTPAddr(), "http", loose(), models,
			plan.Point{Model: "a", Group: 1, Load: plan.Load{Mode: "concurrency", Concurrency: 1}},
			plan.Point{Model: "b", Group: 1, Load: plan.Load{Mode: "concurrency", Concurrency: 1}},
			plan.Point{Model: "c", Load: plan.Load{Mode: "concurrency", Concurrency: 1}})
		var seq []int
		asked := 0
		extending := false
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{
			Progress: func(e Event) {
				if e.Kind == WindowDone && extending {
					seq = append(seq, e.Index)
				}
			},
			Extend: func(r *result.Run) ([]string, int) {
				asked++
				if asked > 2 {
					return nil, 0
				}
				extending = true
				if n := len(r.Points[0].Trials); n != 3*asked {
					t.Errorf("ask %d: p0 has %d trials, want %d", asked, n, 3*asked)
				}
				return []string{"p1", "p0"}, 3
			}})
		if err != nil {
			t.Fatal(err)
		}
		if asked != 3 {
			t.Fatalf("Extend asked %d times, want 3", asked)
		}
		// The order alternates on from the three rounds already kept (a b,
		// b a, a b): b a, a b, b a, then a b, b a, a b.
		if want := []int{1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1}; !slices.Equal(seq, want) {
			t.Fatalf("extension window order %v, want %v", seq, want)
		}
		for i, want := range []int{9, 9, 3} {
			pt := run.Points[i]
			if len(pt.Trials) != want {
				t.Errorf("%s: %d trials, want %d", pt.ID, len(pt.Trials), want)
			}
			checkPointConsistency(t, &pt, 1)
		}
	})
}

// Each interleaved round is a session of its own, and its first window can
// end before any request returns: here every request outlasts a window.
// Such a window is passed over and the session's next one kept, so every
// trial holds completed requests; the point says how many were passed over.
func TestRunInterleavedRoundPassesOverEmptyWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"},
			ModelParams: map[string]map[string]string{"delay": {"delay": "150ms"}}})
		c := newClient(t, "http", srv.HTTPAddr())
		models := []plan.Model{{Alias: "a", Name: "delay"}, {Alias: "b", Name: "delay"}}
		p := testPlan(srv.HTTPAddr(), "http", loose(), models,
			plan.Point{Model: "a", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}},
			plan.Point{Model: "b", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range run.Points {
			if len(pt.Trials) != 3 {
				t.Fatalf("%s: %d trials, want 3", pt.ID, len(pt.Trials))
			}
			for _, tr := range pt.Trials {
				if tr.Metrics.Requests == 0 {
					t.Errorf("%s: trial %d has no completed request", pt.ID, tr.Index)
				}
			}
			// The warm-up ends 30 ms into a round and the first request
			// returns at 150 ms: every round's first window is empty.
			want := "3 interleaved window(s) in which no request finished were passed over"
			if !slices.ContainsFunc(pt.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
				t.Errorf("%s: notes %q lack %q", pt.ID, pt.Notes, want)
			}
		}
	})
}
