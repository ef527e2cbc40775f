// Package embedded starts perfscen's built-in reference server for a plan
// server with embedded: true, whatever its kind: on ephemeral loopback
// ports, or on an in-memory network in tests.
package embedded

import (
	"context"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// Start starts the reference server with srv's model parameter overrides
// and flavour.
func Start(ctx context.Context, srv plan.Server, mem *kinds.Net) (*refserver.Server, error) {
	opts := refserver.Options{
		HTTPAddr:    "127.0.0.1:0",
		GRPCAddr:    "127.0.0.1:0",
		ModelParams: srv.EmbeddedModels,
		Flavor:      refserver.Flavor(srv.EmbeddedFlavor),
		// A fixed version keeps the testbed id stable across perfscen builds:
		// the embedded server is the thing under test in its baselines.
		Version: "embedded",
	}
	if mem != nil {
		host := "embedded"
		if srv.Name != "" {
			host += "-" + srv.Name
		}
		opts.HTTPAddr, opts.GRPCAddr = host+":8000", host+":8001"
		opts.Listen, opts.PlainTimers = mem.Listen, true
	}
	s, err := refserver.New(opts)
	if err != nil {
		// Bad embedded_models parameters are the scenario's fault.
		field := "server.embedded_models"
		if srv.Name != "" {
			field = "servers." + srv.Name + ".embedded_models"
		}
		return nil, failure.Invalid(fmt.Errorf("%s: %w", field, err))
	}
	if err := s.Start(ctx); err != nil {
		return nil, failure.Env(fmt.Errorf("starting the embedded server: %w", err))
	}
	return s, nil
}
