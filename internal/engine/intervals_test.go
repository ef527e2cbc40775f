package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// The intervals pacer replays its gaps in a loop: request 0 at once, each
// next one a gap later, the gaps starting over after the last.
func TestIntervalsPacer(t *testing.T) {
	p := NewIntervalsPacer([]time.Duration{10 * time.Millisecond, 0, 30 * time.Millisecond})
	var got []time.Duration
	for n := range uint64(7) {
		got = append(got, p.Due(n))
	}
	want := []time.Duration{0, 10e6, 10e6, 40e6, 50e6, 50e6, 80e6}
	if !slices.Equal(got, want) {
		t.Errorf("due %v, want %v", got, want)
	}
	if wait, stop := p.Pace(45*time.Millisecond, 4); wait != 5*time.Millisecond || stop {
		t.Errorf("Pace(45ms, 4) = %v, %v", wait, stop)
	}
	if _, stop := NewIntervalsPacer([]time.Duration{0}).Pace(0, 0); !stop {
		t.Error("a schedule of no time at all must send nothing")
	}
}

// A point of load.request_intervals sends on the schedule: on the fake
// clock, with workers to spare (a 10 ms model, gaps of 20 ms and more),
// every send leaves exactly a gap after the one before, the gaps cycling
// through the file's order; every request is given to Options.Requests
// with its response time, and the windows' bounds come with their events.
func TestRequestIntervalsFollowTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"}, ModelParams: delayModel})
		c := newClient(t, plan.ProtocolHTTP, srv.HTTPAddr())
		iv := []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 30 * time.Millisecond}
		p := delayPlan(srv.HTTPAddr(), loose(), plan.Point{ID: "m/r=30", Load: plan.Load{Mode: plan.LoadRequestRate,
			Distribution: plan.Intervals, Intervals: iv, Rate: 30, MaxThreads: 4}})
		var mu sync.Mutex
		var sent []time.Time
		var windows [][2]time.Time
		opts := Options{
			Requests: func(pt *plan.Point, r *Record) {
				mu.Lock()
				defer mu.Unlock()
				if r.Err != nil || len(r.Responses) != 1 || r.Responses[0].Sub(r.Sent) != 10*time.Millisecond || r.Step == nil {
					t.Errorf("%s: record %+v", pt.ID, r)
				}
				sent = append(sent, r.Sent)
			},
			Progress: func(ev Event) {
				if ev.Kind == WindowDone {
					windows = append(windows, [2]time.Time{ev.Start, ev.End})
				}
			},
		}
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, opts)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		slices.SortFunc(sent, func(a, b time.Time) int { return a.Compare(b) })
		if len(sent) < 10 {
			t.Fatalf("%d requests", len(sent))
		}
		for i := 1; i < len(sent); i++ {
			if gap := sent[i].Sub(sent[i-1]); gap != iv[(i-1)%len(iv)] {
				t.Fatalf("gap %d: %v, want %v (schedule %v)", i, gap, iv[(i-1)%len(iv)], iv)
			}
		}
		if pt := run.Points[0]; pt.Summary.Requests == 0 || pt.LateSends != 0 {
			t.Errorf("point: %d requests, %d late", pt.Summary.Requests, pt.LateSends)
		}
		if len(windows) < 3 {
			t.Fatalf("%d windows", len(windows))
		}
		for i, w := range windows {
			if !w[1].After(w[0]) || i > 0 && !w[0].Equal(windows[i-1][1]) {
				t.Errorf("window %d: %v..%v, after %v", i, w[0], w[1], windows[max(i-1, 0)])
			}
		}
	})
}
