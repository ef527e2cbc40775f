package engine

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// Under time windows the first responses of a point are all checked, then
// one in ValidateEvery, across all workers.
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
		// responses, of which the first 100 and the 101st are checked.
		if pt.Validation.Checked != validateFirst+1 || pt.Validation.Mismatches != 0 || !pt.Validation.Sampled {
			t.Errorf("validation = %+v after %d requests, want %d checked", pt.Validation, pt.Summary.Requests, validateFirst+1)
		}
	})
}
