package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func TestBackoffSchedule(t *testing.T) {
	var f failures
	var at time.Duration
	attempts := []time.Duration{0}
	for i := 0; at+f.backoff() < 3*time.Second; i++ {
		at += f.backoff()
		if i > 0 {
			attempts = append(attempts, at)
		}
		f.n++
	}
	// In any second: at most 10 attempts per worker.
	for i := range attempts {
		n := 0
		for _, a := range attempts[i:] {
			if a-attempts[i] < time.Second {
				n++
			}
		}
		if n > 10 {
			t.Fatalf("%d attempts in the second from %v: %v", n, attempts[i], attempts)
		}
	}
	if f.backoff() != backoffCap {
		t.Errorf("backoff after %d failures %v, want the cap %v", f.n, f.backoff(), backoffCap)
	}
	// The figures docs/scenario.md and backoff.go's comment quote: 9
	// attempts in the first second of a run of failures (the first one
	// included), 4 a second once at the cap.
	first, later := 0, 0
	for _, a := range attempts {
		switch {
		case a < time.Second:
			first++
		case a >= 2*time.Second && a < 3*time.Second:
			later++
		}
	}
	if first != 9 || later != 4 {
		t.Errorf("%d attempts in the first second and %d in the third, want 9 and 4: %v", first, later, attempts)
	}
}

// A server that goes away in the middle of a long window: the workers
// back off, and the point ends as "could not measure" (exit 3) within
// goneAfter and one backoff of the server's last reply, after at most 10
// failed attempts per second per worker, instead of failing at full speed
// until the window ends (a minute here) and one more window. The failed
// point shows no figures, and the dominant class of its failures is
// quoted. On testing/synctest's clock, the bounds are exact.
func TestRunServerGoneIsBounded(t *testing.T) {
	for _, proto := range []plan.Protocol{"http", "grpc"} {
		t.Run(string(proto), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := startServer(t, refserver.Options{Models: []string{"delay"},
					ModelParams: map[string]map[string]string{"delay": {"delay": "10ms"}}})
				addr := srv.HTTPAddr()
				if proto == "grpc" {
					addr = srv.GRPCAddr()
				}
				c := newClient(t, proto, addr)
				const workers = 4
				m := plan.Measurement{Mode: plan.TimeWindows, Window: time.Minute, StabilityPct: 0.0001,
					MaxTrials: 5, Warmup: 100 * time.Millisecond, Trials: 3}
				p := testPlan(addr, proto, m, []plan.Model{{Alias: "m", Name: "delay"}},
					plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: workers}})
				var killed time.Time
				go func() {
					time.Sleep(30 * time.Second) // in the middle of the first window
					killed = time.Now()
					srv.Close()
				}()
				run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(fp32Data(1)))}, Options{})
				took := time.Since(killed)
				t.Logf("ended %v after the kill, %d failed requests, classes %+v", took, run.Points[0].Errors.Count, run.Points[0].Errors.Classes)
				if !errors.Is(err, ErrUnreachable) || exitcode.Of(err) != exitcode.Environment {
					t.Fatalf("err = %v, want ErrUnreachable with exit code 3", err)
				}
				if !strings.Contains(err.Error(), "dominant error: connection refused") {
					t.Errorf("err = %v, want the dominant class quoted", err)
				}
				bound := goneAfter + backoffCap + 500*time.Millisecond // + the drain
				if took > bound {
					t.Errorf("the point ended %v after the server went away, want at most %v", took, bound)
				}
				pt := run.Points[0]
				maxAttempts := int64(workers * 10 * (took.Seconds() + 1))
				if pt.Errors.Count == 0 || pt.Errors.Count > maxAttempts {
					t.Errorf("%d failed requests in %v with %d workers, want at most %d", pt.Errors.Count, took, workers, maxAttempts)
				}
				if d, ok := pt.Errors.Dominant(); !ok || d.Class != "connection refused" {
					t.Errorf("classes %+v, want connection refused first", pt.Errors.Classes)
				}
				if pt.Status != result.PointFailed || len(pt.Trials) != 0 || pt.Summary.Throughput != 0 || pt.Summary.P50Us != 0 {
					t.Errorf("status %s, %d trials, summary %+v: a failed point must show no figures", pt.Status, len(pt.Trials), pt.Summary)
				}
			})
		})
	}
}
