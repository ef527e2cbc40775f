package launch

import (
	"context"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/client"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
	"github.com/perfscen/perfscen/runner"
)

// Options tune a run.
type Options struct {
	Version        string
	Progress       func(runner.Event)
	ConnectTimeout time.Duration // default DefaultConnectTimeout
	// Runner passes through settings for tests (drain, windows).
	Runner runner.Options
}

// Run measures the plan. The result is returned whenever anything was
// measured, together with the error that stopped the run, so partial
// figures are never lost. Errors carry their exit code.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	if p.Server.Kind == plan.KindOpenAI {
		return runOpenAI(ctx, p, opts)
	}
	urls := map[string]string{"http": p.Server.URLFor("http"), "grpc": p.Server.URLFor("grpc")}
	embeddedInfo := false
	if p.Server.Embedded {
		srv, err := embedded(ctx, p)
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		urls["http"], urls["grpc"] = srv.HTTPAddr(), srv.GRPCAddr()
		embeddedInfo = true
	}
	clients, err := connect(ctx, p, urls, opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	main := clients[p.Server.Protocol]
	if main == nil {
		for _, c := range clients {
			main = c
			break
		}
	}
	md, err := readServerMetadata(ctx, main, p)
	if err != nil {
		return nil, err
	}
	neg, err := negotiate(p, md)
	if err != nil {
		return nil, err
	}
	if err := applyNegotiation(ctx, p, clients, urls, neg); err != nil {
		return nil, err
	}
	main = clients[p.Server.Protocol]
	if main == nil {
		for _, c := range clients {
			main = c
			break
		}
	}
	specs := map[string]inputdata.ModelSpec{}
	for _, m := range p.Models {
		spec, err := modelSpec(ctx, main, m, neg.useConfig)
		if err != nil {
			return nil, err
		}
		specs[m.Alias] = spec
	}
	if err := checkJSONOutputs(p, specs, neg); err != nil {
		return nil, err
	}
	inputs, err := loadInputs(p, specs)
	if err != nil {
		return nil, err
	}
	deps := runner.Deps{
		Client: main,
		ClientFor: func(proto string) (client.Client, error) {
			c, ok := clients[proto]
			if !ok {
				return nil, fmt.Errorf("no %s client connected", proto)
			}
			return c, nil
		},
		Inputs: func(pt *plan.Point) (*inputdata.Data, error) {
			d, ok := inputs[inputKey(*pt)]
			if !ok {
				return nil, fmt.Errorf("no input data prepared for point %s", pt.ID)
			}
			return d, nil
		},
		ServerMetadata: md,
		NoServerStats:  !neg.serverStats,
		Notes:          neg.notes,
	}
	ro := opts.Runner
	ro.Version = opts.Version
	ro.Progress = opts.Progress
	run, err := runner.Run(ctx, p, deps, ro)
	if run != nil {
		run.Environment.Server.Embedded = embeddedInfo
		if !embeddedInfo {
			run.Environment.Server.URL = p.Server.URLFor(p.Server.Protocol)
		}
	}
	return run, err
}
