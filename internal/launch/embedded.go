package launch

import (
	"context"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/refserver"
)

// embedded starts the built-in reference server on ephemeral loopback ports
// with the plan's model parameter overrides.
func embedded(ctx context.Context, p *plan.Plan) (*refserver.Server, error) {
	srv, err := refserver.New(refserver.Options{
		HTTPAddr:    "127.0.0.1:0",
		GRPCAddr:    "127.0.0.1:0",
		ModelParams: p.Server.EmbeddedModels,
		Flavor:      refserver.Flavor(p.Server.EmbeddedFlavor),
		// A fixed version keeps the testbed id stable across perfscen builds:
		// the embedded server is the thing under test in its baselines.
		Version: "embedded",
	})
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
