package runner

import (
	"context"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// embedded starts the built-in reference server on ephemeral loopback ports
// (or on mem, named after the plan's server) with the plan's model
// parameter overrides.
func embedded(ctx context.Context, p *plan.Plan, mem *Net) (*refserver.Server, error) {
	opts := refserver.Options{
		HTTPAddr:    "127.0.0.1:0",
		GRPCAddr:    "127.0.0.1:0",
		ModelParams: p.Server.EmbeddedModels,
		Flavor:      refserver.Flavor(p.Server.EmbeddedFlavor),
		// A fixed version keeps the testbed id stable across perfscen builds:
		// the embedded server is the thing under test in its baselines.
		Version: "embedded",
	}
	if mem != nil {
		host := "embedded"
		if p.Server.Name != "" {
			host += "-" + p.Server.Name
		}
		opts.HTTPAddr, opts.GRPCAddr = host+":8000", host+":8001"
		opts.Listen, opts.PlainTimers = mem.Listen, true
	}
	srv, err := refserver.New(opts)
	if err != nil {
		// Bad embedded_models parameters are the scenario's fault.
		field := "server.embedded_models"
		if p.Server.Name != "" {
			field = "servers." + p.Server.Name + ".embedded_models"
		}
		return nil, failure.Invalid(fmt.Errorf("%s: %w", field, err))
	}
	if err := srv.Start(ctx); err != nil {
		return nil, failure.Env(fmt.Errorf("starting the embedded server: %w", err))
	}
	return srv, nil
}
