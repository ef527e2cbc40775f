package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/scenario"
)

// perfscen plan's best case is what a run takes when every point is
// stable in its first windows: on the fake clock, interleaved points
// (each trial a session of its own, warmed up again) take that and no
// more, give or take the few milliseconds each session waits for its
// last request.
func TestEstimateMatchesAnInterleavedRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		models := []plan.Model{{Alias: "a", Name: "simple"}, {Alias: "b", Name: "simple"}}
		m := loose()
		m.Warmup = 200 * time.Millisecond
		p := testPlan(srv.HTTPAddr(), "http", m, models,
			plan.Point{Model: "a", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}},
			plan.Point{Model: "b", Group: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		began := time.Now()
		if _, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{}); err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		est := scenario.Estimate(p)
		// 2 × (warm-up + 3 windows) to stabilize, then 3 rounds of a
		// session each for a and b: 2 × 3 × (warm-up + window).
		if want := 2*(m.Warmup+3*m.Window) + 6*(m.Warmup+m.Window); est.Total != want {
			t.Errorf("estimate %v, want %v", est.Total, want)
		}
		// A session ends when its last request does: 1 ms each here.
		if slack := 8 * 10 * time.Millisecond; took < est.Total || took > est.Total+slack {
			t.Errorf("the run took %v on the fake clock, the estimate says %v at best", took, est.Total)
		}
	})
}
