package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// failingRegister fails the n-th shared-memory registration.
type failingRegister struct {
	client.Client
	n     int32
	calls atomic.Int32
}

func (f *failingRegister) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, size uint64) error {
	if f.calls.Add(1) == f.n {
		return errors.New("injected registration failure")
	}
	return f.Client.RegisterSystemSharedMemory(ctx, name, key, offset, size)
}

func shmPlan(addr string, m plan.Measurement, ld plan.Load) *plan.Plan {
	return testPlan(addr, "http", m, []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
		plan.Point{SharedMemory: "system", Load: ld, BatchSize: 2})
}

func assertNoRegions(t *testing.T, c client.Client) {
	t.Helper()
	st, err := c.SystemSharedMemoryStatus(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 0 {
		t.Errorf("server still has regions registered: %+v", st)
	}
}

func TestRunSystemSharedMemory(t *testing.T) {
	checkShm(t)
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		p := shmPlan(srv.HTTPAddr(), loose(), plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(2, 3)))}, Options{ValidateEvery: 1})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		if pt.Errors.Count != 0 || pt.Summary.Requests == 0 {
			t.Fatalf("errors %+v, requests %d", pt.Errors, pt.Summary.Requests)
		}
		// Outputs were read back from the regions and compared.
		if pt.Validation.Checked == 0 || pt.Validation.Mismatches != 0 {
			t.Errorf("validation = %+v", pt.Validation)
		}
		assertNoRegions(t, c)
	})
}

func TestRunSystemSharedMemoryCleanupOnError(t *testing.T) {
	checkLeaks(t)
	checkShm(t)
	srv := startServer(t, refserver.Options{Models: []string{"simple"}})
	c := newClient(t, "http", srv.HTTPAddr())
	for _, n := range []int32{2, 4} { // an input region; a worker's output region
		fc := &failingRegister{Client: c, n: n}
		p := shmPlan(srv.HTTPAddr(), loose(), plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, fc, inputsOf(simpleData(2, 3)))}, Options{})
		if err == nil {
			t.Fatalf("failure at registration %d went unnoticed", n)
		}
		if run.Status != result.StatusPartial {
			t.Errorf("status %s", run.Status)
		}
		assertNoRegions(t, c)
	}
}

func TestRunSystemSharedMemoryCleanupOnCancel(t *testing.T) {
	checkShm(t)
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		m := loose()
		m.StabilityPct, m.MaxTrials = 0.0001, 100
		p := shmPlan(srv.HTTPAddr(), m, plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Mid-run on the fake clock: after the warm-up and two windows.
		time.AfterFunc(250*time.Millisecond, cancel)
		run, err := Run(ctx, p, Deps{Servers: servers(p, c, inputsOf(simpleData(2, 3)))}, Options{})
		if err != nil || run.Status != result.StatusInterrupted {
			t.Fatalf("err %v, status %s", err, run.Status)
		}
		if n := len(run.Points[0].Windows); n != 2 {
			t.Errorf("%d windows before the interrupt at 250 ms, want 2", n)
		}
		assertNoRegions(t, c)
	})
}
