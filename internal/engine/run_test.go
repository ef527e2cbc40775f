package engine

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds/kserve"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// On the fake clock every window holds the same requests, so the point is
// stable after its first three windows however busy the machine is.
func TestRunConcurrencySimple(t *testing.T) {
	for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
		t.Run(string(proto), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := startServer(t, refserver.Options{Models: []string{"simple"}, ModelParams: fakeLatency})
				addr := srv.HTTPAddr()
				if proto == plan.ProtocolGRPC {
					addr = srv.GRPCAddr()
				}
				c := newClient(t, proto, addr)
				m := loose()
				p := testPlan(addr, proto, m, []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
					plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}, BatchSize: 2})
				var events []EventKind
				run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(2, 3)))},
					Options{Version: "test", ValidateEvery: 1, Progress: func(e Event) { events = append(events, e.Kind) }})
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if run.Status != result.StatusComplete || len(run.Points) != 1 {
					t.Fatalf("status %s, %d points", run.Status, len(run.Points))
				}
				pt := run.Points[0]
				if pt.Status != result.PointStable || len(pt.Windows) != 3 || len(pt.Trials) != 3 {
					t.Fatalf("point status %s, %d trials; windows %+v", pt.Status, len(pt.Trials), pt.Windows)
				}
				checkPointConsistency(t, &pt, 2)
				if pt.Errors.Count != 0 {
					t.Errorf("errors: %+v", pt.Errors)
				}
				if !pt.Validation.Enabled || pt.Validation.Checked == 0 || pt.Validation.Mismatches != 0 {
					t.Errorf("validation = %+v", pt.Validation)
				}
				s := pt.Summary.Server
				if s == nil || s.Reset || s.RequestCount == 0 || s.InferenceCount < s.RequestCount {
					t.Errorf("server stats = %+v", s)
				}
				if run.Environment.Server.Name != refserver.ServerName || run.Environment.Testbed == "" || run.Environment.PerfscenVersion != "test" {
					t.Errorf("environment = %+v", run.Environment)
				}
				if events[0] != PointStarted || events[len(events)-1] != PointDone {
					t.Errorf("events = %v", events)
				}
			})
		})
	}
}

// checkPointConsistency checks what must hold for any measured point.
func checkPointConsistency(t *testing.T, pt *result.Point, batch int) {
	t.Helper()
	var reqs int64
	var dur time.Duration
	kept := 0
	for _, w := range pt.Windows {
		if w.Kept {
			kept++
		}
	}
	if kept != len(pt.Trials) {
		t.Errorf("%d windows marked kept, %d trials", kept, len(pt.Trials))
	}
	if n := len(pt.Windows); n < len(pt.Trials) || (n > 0 && !pt.Windows[n-1].Kept && pt.Status == result.PointStable) {
		t.Errorf("trials are not a suffix of the windows: %+v", pt.Windows)
	}
	for _, tr := range pt.Trials {
		reqs += tr.Metrics.Requests
		dur += tr.Duration
		h, err := hdrhistogram.Decode([]byte(tr.Histogram))
		if err != nil {
			t.Fatalf("trial %d histogram: %v", tr.Index, err)
		}
		if h.TotalCount() != tr.Metrics.Requests {
			t.Errorf("trial %d: histogram holds %d, metrics say %d", tr.Index, h.TotalCount(), tr.Metrics.Requests)
		}
		m := tr.Metrics
		if m.Requests > 0 && !(m.LatencyMinUs <= m.P50Us && m.P50Us <= m.P90Us && m.P90Us <= m.P99Us && m.P99Us <= m.LatencyMaxUs) {
			t.Errorf("trial %d percentiles out of order: %+v", tr.Index, m)
		}
		if tr.Start.IsZero() {
			t.Errorf("trial %d has no start time", tr.Index)
		}
	}
	if pt.Summary.Requests != reqs {
		t.Errorf("summary requests %d, trials sum %d", pt.Summary.Requests, reqs)
	}
	if want := float64(reqs) * float64(batch) / dur.Seconds(); dur > 0 && (pt.Summary.Throughput < want*0.999 || pt.Summary.Throughput > want*1.001) {
		t.Errorf("summary throughput %v, want %v", pt.Summary.Throughput, want)
	}
}

func TestRunIterationsExactCount(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, refserver.Options{Models: []string{"simple"}})
	c := newClient(t, "http", srv.HTTPAddr())
	p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
		plan.Point{Load: plan.Load{Mode: plan.LoadIterations, Concurrency: 3, WarmupIterations: 5, Iterations: 37}})
	run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 4)))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pt := run.Points[0]
	if pt.Status != result.PointStable || len(pt.Trials) != 1 || len(pt.Windows) != 1 {
		t.Fatalf("status %s, %d trials, %d windows", pt.Status, len(pt.Trials), len(pt.Windows))
	}
	if pt.Summary.Requests != 37 || pt.Summary.Errors != 0 {
		t.Errorf("requests %d errors %d, want exactly 37 and 0", pt.Summary.Requests, pt.Summary.Errors)
	}
	if s := pt.Summary.Server; s == nil || s.RequestCount != 37 {
		t.Errorf("server saw %+v, want 37 requests (warm-up excluded)", s)
	}
	if pt.Validation.Checked != 37 || pt.Validation.Sampled {
		t.Errorf("validation = %+v, want all 37 checked", pt.Validation)
	}
	checkPointConsistency(t, &pt, 1)
}

// On synctest's fake clock the schedule, the service time and the stalls
// are exact, so what the test sees does not depend on how busy the machine
// is.
func TestRunRequestRateStallShowsInP99(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"}, ModelParams: map[string]map[string]string{
			"delay": {"delay": "1ms", "stall_every": "200ms", "stall_for": "60ms"}}})
		c := newClient(t, "http", srv.HTTPAddr())
		m := loose()
		m.Window = 300 * time.Millisecond
		m.MaxTrials = 3
		m.StabilityPct = 1000
		p := testPlan(srv.HTTPAddr(), "http", m, []plan.Model{{Alias: "m", Name: "delay"}},
			plan.Point{Load: plan.Load{Mode: plan.LoadRequestRate, Rate: 50, Distribution: "constant"}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		checkPointConsistency(t, &pt, 1)
		s := pt.Summary
		// 30 % of the arrivals land in a stall and wait up to 60 ms (from
		// their schedule); the rest take 1 ms.
		if s.P99Us < 40000 || s.P50Us > 1100 {
			t.Errorf("p50 %.0f µs, p99 %.0f µs: the stall does not show in p99", s.P50Us, s.P99Us)
		}
		// Open loop: the rate holds whatever the latency.
		if s.Throughput < 49 || s.Throughput > 51 || pt.LateSends != 0 {
			t.Errorf("throughput %.1f/s at a 50/s schedule; late %d, windows %+v", s.Throughput, pt.LateSends, pt.Windows)
		}
	})
}

// On the fake clock the simple model answers in exactly 1 ms, so a 50 ms
// step holds 50 requests whatever the machine's load: a window asked for 70
// grows to two steps and holds 100.
func TestRunCountWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{HTTPAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "grpc", srv.GRPCAddr())
		m := loose()
		m.Mode, m.RequestCount = "count_windows", 70
		p := testPlan(srv.GRPCAddr(), "grpc", m, []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 2)))},
			Options{MinCountWindow: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		if pt.Status != result.PointStable || len(pt.Windows) != 3 {
			t.Fatalf("status %s, windows %+v", pt.Status, pt.Windows)
		}
		for _, w := range pt.Windows {
			if w.Duration != 100*time.Millisecond || w.Requests != 100 {
				t.Errorf("window %d: %d requests in %v, want 100 in two 50ms steps", w.Index, w.Requests, w.Duration)
			}
		}
		if pt.Validation.Sampled || pt.Validation.Checked < 300 {
			t.Errorf("count windows should validate every response: %+v", pt.Validation)
		}
		checkPointConsistency(t, &pt, 1)
	})
}

func TestRunStreamingAndSequences(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, refserver.Options{Models: []string{"accumulate"}})
	c := newClient(t, "grpc", srv.GRPCAddr())
	// Two streams; the model sums INPUT over a sequence, so correct outputs
	// prove start/end flags and correlation ids are right.
	step := func(in, want int32) inputdataStep {
		return inputdataStep{int32Tensor("INPUT", []int64{1}, []int32{in}), int32Tensor("OUTPUT", []int64{1}, []int32{want})}
	}
	d := seqData([][]inputdataStep{
		{step(1, 1), step(2, 3), step(3, 6)},
		{step(10, 10), step(20, 30)},
	})
	for _, streaming := range []bool{false, true} {
		p := testPlan(srv.GRPCAddr(), "grpc", loose(), []plan.Model{{Alias: "m", Name: "accumulate", Validate: true, Sequence: true}},
			plan.Point{Load: plan.Load{Mode: plan.LoadIterations, Concurrency: 3, Iterations: 60, Streaming: streaming}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(d))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		if pt.Summary.Requests != 60 || pt.Errors.Count != 0 || pt.Validation.Mismatches != 0 || pt.Validation.Checked != 60 {
			t.Errorf("streaming=%v: requests %d, errors %+v, validation %+v", streaming, pt.Summary.Requests, pt.Errors, pt.Validation)
		}
	}
}

func TestRunUnreachableServer(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, refserver.Options{Models: []string{"simple"}})
	addr := srv.HTTPAddr()
	c := newClient(t, "http", addr)
	srv.Close()
	p := testPlan(addr, "http", loose(), []plan.Model{{Alias: "m", Name: "simple"}},
		plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
	run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{})
	if err == nil || exitcode.Of(err) != exitcode.Environment {
		t.Fatalf("err = %v (code %d), want an environment error", err, exitcode.Of(err))
	}
	if run == nil || run.Status != result.StatusPartial || len(run.Errors) == 0 {
		t.Errorf("run = %+v", run)
	}
}

// This one stays on the real clock (TestRunServerGoneIsBounded runs the
// same loss on synctest's): its assertions hold at any speed, since the
// window after the loss has no success whenever it ends.
func TestRunServerDiesMidRun(t *testing.T) {
	checkLeaks(t)
	srv := startServer(t, refserver.Options{Models: []string{"simple"}})
	c := newClient(t, "grpc", srv.GRPCAddr())
	m := loose()
	m.StabilityPct = 0.0001 // never stable: keeps measuring
	m.MaxTrials = 50
	p := testPlan(srv.GRPCAddr(), "grpc", m, []plan.Model{{Alias: "m", Name: "simple"}},
		plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}},
		plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
	windows := 0
	run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))},
		Options{Progress: func(e Event) {
			if e.Kind == WindowDone {
				if windows++; windows == 2 {
					srv.Close()
				}
			}
		}})
	if !errors.Is(err, ErrUnreachable) || exitcode.Of(err) != exitcode.Environment {
		t.Fatalf("err = %v, want ErrUnreachable with exit code 3", err)
	}
	if run.Status != result.StatusPartial || len(run.Points) != 1 || run.Points[0].Status != result.PointFailed {
		t.Errorf("status %s, points %d", run.Status, len(run.Points))
	}
	if run.Points[0].Errors.Count == 0 || len(run.Points[0].Windows) < 2 {
		t.Errorf("failed point lost its data: %+v", run.Points[0])
	}
}

// On the fake clock the interrupt lands at a known time and how long the
// run takes to wind down after it is exact, not a guess about how busy
// the machine is.
func TestRunInterrupt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"delay"},
			ModelParams: map[string]map[string]string{"delay": {"delay": "20ms"}}})
		c := newClient(t, "http", srv.HTTPAddr())
		m := loose()
		m.StabilityPct = 0.0001
		m.MaxTrials = 100
		p := testPlan(srv.HTTPAddr(), "http", m, []plan.Model{{Alias: "m", Name: "delay"}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 4}})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var cancelled time.Time
		run, err := Run(ctx, p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{
			Progress: func(e Event) {
				if e.Kind == WindowDone && e.Window.Index == 1 {
					cancelled = time.Now()
					cancel()
				}
			}})
		took := time.Since(cancelled)
		if err != nil {
			t.Fatalf("interrupt is not an error: %v", err)
		}
		if run.Status != result.StatusInterrupted || len(run.Points) != 1 || run.Points[0].Status != result.PointPartial {
			t.Fatalf("status %s, points %+v", run.Status, run.Points)
		}
		if len(run.Points[0].Windows) != 2 || run.Points[0].Errors.Count != 0 {
			t.Errorf("partial point = %+v", run.Points[0])
		}
		if took >= m.Window {
			t.Errorf("returned %v after the interrupt, want less than one %v window of the 98 left", took, m.Window)
		}
	})
}

func TestRunCUDAIsInvalid(t *testing.T) {
	srv := startServer(t, refserver.Options{Models: []string{"simple"}})
	c := newClient(t, "http", srv.HTTPAddr())
	p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple"}},
		plan.Point{SharedMemory: "cuda", Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
	_, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{})
	if !errors.Is(err, kserve.ErrCUDA) || exitcode.Of(err) != exitcode.Invalid {
		t.Errorf("err = %v, want the CUDA error with exit code 2", err)
	}
}
