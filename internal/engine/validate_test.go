package engine

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// Under time windows the first responses of a point are all checked, then
// one in ValidateEvery of each entry, across all workers.
func TestRunValidatesFirstResponsesThenSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
		c := newClient(t, "http", srv.HTTPAddr())
		p := testPlan(srv.HTTPAddr(), "http", loose(), []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
			plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 2}})
		run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(simpleData(1, 3)))},
			Options{ValidateEvery: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		pt := run.Points[0]
		// 2 workers at 1 ms a request over at least 330 ms: hundreds of
		// responses, of which the first 100 are checked, and then the
		// first of each of the 3 entries.
		if pt.Validation.Checked != validateFirst+3 || pt.Validation.Mismatches != 0 || !pt.Validation.Sampled {
			t.Errorf("validation = %+v after %d requests, want %d checked", pt.Validation, pt.Summary.Requests, validateFirst+3)
		}
	})
}

// Sampling counts each data entry on its own: with round-robin entries at
// concurrency 1, a count across the point lands on the same entries at
// every ValidateEvery-th response (entry 0 alone, for 2, 5 or 10 entries
// and one in 10), so a wrong reply to entry 1 was caught in the first 100
// responses and never after. Every entry must keep being checked at the
// sampling rate: the mismatches stay one n-th of the checks.
func TestRunSamplesEveryEntry(t *testing.T) {
	for _, n := range []int{2, 5, 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := startServer(t, refserver.Options{GRPCAddr: "-", Models: []string{"simple"}, ModelParams: fakeLatency})
				c := newClient(t, "http", srv.HTTPAddr())
				data := simpleData(1, n)
				// Entry 1's expected sum is off by one: every reply to it
				// differs, and no other does.
				sum := data.Streams[0][1].Expected[0].Raw
				sum[0]++
				m := loose()
				m.StabilityPct, m.Trials, m.MaxTrials = 1e6, 10, 10
				p := testPlan(srv.HTTPAddr(), "http", m, []plan.Model{{Alias: "m", Name: "simple", Validate: true}},
					plan.Point{Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
				run, err := Run(context.Background(), p, Deps{Servers: servers(p, c, inputsOf(data))}, Options{ValidateEvery: 10})
				if err != nil {
					t.Fatal(err)
				}
				v := run.Points[0].Validation
				t.Logf("%d entries: %+v", n, v)
				if v.Checked < validateFirst+50 {
					t.Fatalf("only %d responses checked of %d: too few to tell", v.Checked, run.Points[0].Summary.Requests)
				}
				if d := int64(n)*v.Mismatches - v.Checked; d < -int64(2*n) || d > int64(2*n) {
					t.Errorf("%d entries: %d of %d checked responses differ, want about 1 in %d (%+v)", n, v.Mismatches, v.Checked, n, v)
				}
			})
		})
	}
}
