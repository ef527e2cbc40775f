package engine

import (
	"context"
	"fmt"
	"github.com/perfscen/perfscen/internal/tensor"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// countingRegister counts shared-memory registrations and remembers the
// largest region registered.
type countingRegister struct {
	client.Client
	calls   atomic.Int32
	largest atomic.Uint64
}

func (c *countingRegister) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, size uint64) error {
	c.calls.Add(1)
	for {
		old := c.largest.Load()
		if size <= old || c.largest.CompareAndSwap(old, size) {
			break
		}
	}
	return c.Client.RegisterSystemSharedMemory(ctx, name, key, offset, size)
}

// Shared memory in every load mode, on both protocols, with and without a
// warm-up: each session (the warm-up's included) hands its callers' output
// regions back, and the next session reuses them rather than creating
// regions of the same name again ("file exists"). Every request succeeds,
// every response is validated from the regions, and nothing is left
// registered or in /dev/shm.
func TestRunSystemSharedMemoryEveryMode(t *testing.T) {
	checkShm(t)
	modes := []struct {
		name string
		load plan.Load
		// warm sets the warm-up: warm-up iterations (iterations mode),
		// a warm-up time otherwise.
		warm func(ld *plan.Load, m *plan.Measurement)
	}{
		{"concurrency", plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2},
			func(_ *plan.Load, m *plan.Measurement) { m.Warmup = 50 * time.Millisecond }},
		{"request_rate", plan.Load{Mode: plan.LoadRequestRate, Rate: 400, Distribution: plan.Constant, MaxThreads: 2},
			func(_ *plan.Load, m *plan.Measurement) { m.Warmup = 50 * time.Millisecond }},
		{"iterations", plan.Load{Mode: plan.LoadIterations, Concurrency: 2, Iterations: 40},
			func(ld *plan.Load, _ *plan.Measurement) { ld.WarmupIterations = 10 }},
	}
	for _, md := range modes {
		for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
			for _, warm := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/warmup=%v", md.name, proto, warm), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						srv := startServer(t, refserver.Options{Models: []string{"simple"}, ModelParams: fakeLatency})
						addr := srv.HTTPAddr()
						if proto == plan.ProtocolGRPC {
							addr = srv.GRPCAddr()
						}
						c := &countingRegister{Client: newClient(t, proto, addr)}
						m := loose()
						m.Warmup = 0
						ld := md.load
						if warm {
							md.warm(&ld, &m)
						}
						p := testPlan(addr, proto, m, []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
							plan.Point{SharedMemory: plan.ShmSystem, Load: ld, BatchSize: 2})
						run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(2, 3)))}, Options{ValidateEvery: 1})
						if err != nil {
							t.Fatal(err)
						}
						pt := run.Points[0]
						if run.Status != result.StatusComplete || pt.Errors.Count != 0 || pt.Summary.Requests == 0 {
							t.Fatalf("status %s, errors %+v, requests %d, notes %v", run.Status, pt.Errors, pt.Summary.Requests, pt.Notes)
						}
						if ld.Mode == plan.LoadIterations && pt.Summary.Requests != 40 {
							t.Errorf("%d requests measured, want 40", pt.Summary.Requests)
						}
						if pt.Validation.Checked == 0 || pt.Validation.Mismatches != 0 {
							t.Errorf("validation = %+v", pt.Validation)
						}
						// Two input regions, and two output regions per
						// worker, made once whatever the sessions.
						if n, most := c.calls.Load(), int32(2+2*4); n > most {
							t.Errorf("%d regions registered, want at most %d (output regions are reused)", n, most)
						}
						assertNoRegions(t, c)
					})
				})
			}
		}
	}
}

// A session after another (here the comparison's interleaved rounds, each
// a session per arm) reuses the regions of the one before.
func TestRunSystemSharedMemoryReusedAcrossRounds(t *testing.T) {
	checkShm(t)
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := &countingRegister{Client: newClient(t, "http", srv.HTTPAddr())}
		ld := plan.Load{Mode: plan.LoadIterations, Concurrency: 3, WarmupIterations: 6, Iterations: 30}
		p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
			plan.Point{SharedMemory: plan.ShmSystem, Load: ld, BatchSize: 1},
			plan.Point{SharedMemory: plan.ShmSystem, Load: ld, BatchSize: 1})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 4)))}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range run.Points {
			if pt.Errors.Count != 0 || pt.Summary.Requests != 30 {
				t.Fatalf("%s: errors %+v, requests %d", pt.ID, pt.Errors, pt.Summary.Requests)
			}
		}
		// Per point: 2 inputs + 3 callers × 2 outputs, the warm-up's
		// reused by the measured session.
		if n := c.calls.Load(); n != 2*(2+3*2) {
			t.Errorf("%d registrations, want %d", n, 2*(2+3*2))
		}
		assertNoRegions(t, c)
	})
}

// An output whose shape the metadata leaves open (identity_int32's
// [-1,-1]) is sized from one reply before the load, not from the 100 KB
// default the server would refuse: here 1.2 MB each way.
func TestRunSystemSharedMemorySizesVariableOutputs(t *testing.T) {
	checkShm(t)
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{Models: []string{"identity_int32"}})
		for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
			addr := srv.HTTPAddr()
			if proto == plan.ProtocolGRPC {
				addr = srv.GRPCAddr()
			}
			c := &countingRegister{Client: newClient(t, proto, addr)}
			const n = 300_000
			vals := make([]int32, n)
			for i := range vals {
				vals[i] = int32(i)
			}
			in := int32Tensor("INPUT0", []int64{1, n}, vals)
			want := in
			want.Name = "OUTPUT0"
			d := &inputdata.Data{Streams: [][]inputdata.Step{{{Inputs: []tensor.Tensor{in}, Expected: []tensor.Tensor{want}}}}, BatchSize: 1}
			p := testPlan(addr, proto, loose(), []plan.Model{{Alias: "m", Name: "identity_int32", Validate: true}},
				plan.Point{SharedMemory: plan.ShmSystem, Load: plan.Load{Mode: plan.LoadIterations, Concurrency: 2, WarmupIterations: 2, Iterations: 6}})
			run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(d))}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			pt := run.Points[0]
			if pt.Errors.Count != 0 || pt.Summary.Requests != 6 || pt.Validation.Mismatches != 0 || pt.Validation.Checked == 0 {
				t.Fatalf("%s: errors %+v, requests %d, validation %+v", proto, pt.Errors, pt.Summary.Requests, pt.Validation)
			}
			if got := c.largest.Load(); got != 4*n {
				t.Errorf("%s: largest region %d bytes, want %d (the reply's size)", proto, got, 4*n)
			}
			assertNoRegions(t, c)
		}
	})
}

// output_shared_memory_size overrides any derived size.
func TestRunSystemSharedMemoryOutputSizeOverride(t *testing.T) {
	checkShm(t)
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}})
		c := &countingRegister{Client: newClient(t, "http", srv.HTTPAddr())}
		p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple"}},
			plan.Point{SharedMemory: plan.ShmSystem, OutputShmSize: 1 << 20, Load: plan.Load{Mode: plan.LoadIterations, Concurrency: 1, Iterations: 3}})
		if _, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 1)))}, Options{}); err != nil {
			t.Fatal(err)
		}
		if got := c.largest.Load(); got != 1<<20 {
			t.Errorf("largest region %d, want the override %d", got, 1<<20)
		}
	})
}
