// Package embedded starts perfscen's built-in reference server for a plan
// server with embedded: true, whatever its kind: on ephemeral loopback
// ports, or on an in-memory network in tests.
package embedded

import (
	"context"
	"fmt"
	"net"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

// Start starts the reference server with srv's model parameter overrides
// and flavour, serving mounts (another kind's API with models of its own)
// on its HTTP port beside KServe's.
func Start(ctx context.Context, srv plan.Server, mem *kinds.Net, mounts ...refserver.Mount) (*refserver.Server, error) {
	opts := refserver.Options{
		Mounts:      mounts,
		HTTPAddr:    "127.0.0.1:0",
		GRPCAddr:    "127.0.0.1:0",
		ModelParams: srv.EmbeddedModels,
		Flavor:      refserver.Flavor(srv.EmbeddedFlavor),
		// A fixed version keeps the testbed id stable across perfscen builds:
		// the embedded server is the thing under test in its baselines.
		Version: "embedded",
		// Its model threads are accounted: the figures a busy machine
		// cannot move. Not on the in-memory network of tests, whose
		// figures must not depend on the machine.
		AccountThreads: mem == nil,
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

// Core builds the reference server's models, scheduler and statistics for
// srv without any listener: the core that a kind's own front-end serves
// (see Flavour). Close it when done.
func Core(srv plan.Server, mem *kinds.Net) (*refserver.Server, error) {
	opts := refserver.Options{ModelParams: srv.EmbeddedModels, Version: "embedded", HTTPAddr: "-", GRPCAddr: "-",
		PlainTimers: mem != nil, AccountThreads: mem == nil}
	s, err := refserver.New(opts)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s.embedded_models: %w", kinds.ServerField(srv), err))
	}
	return s, nil
}

// Listen opens a listener; nil means TCP.
type Listen func(ctx context.Context, network, addr string) (net.Listener, error)

// Frontend is a kind's own API served over the reference server's core.
type Frontend interface {
	// Endpoints are the front-end's bound addresses by endpoint name
	// (e.g. "grpc" and "rest", or "inference", "management", "metrics").
	Endpoints() map[string]string
	// Close stops serving; the core stays the caller's to close.
	Close() error
}

// Flavour is implemented by kinds whose embedded server speaks an API of
// their own (TF Serving, TorchServe, …): perfscen serve --flavor NAME and
// scenarios with embedded: true start it over the shared core.
type Flavour interface {
	kinds.Kind
	// ServeFlavour starts the front-end over core. addrs gives a listen
	// address per endpoint name: missing names take the kind's usual
	// ports on loopback, "127.0.0.1:0" an ephemeral port, "-" none.
	ServeFlavour(ctx context.Context, core *refserver.Server, addrs map[string]string, listen Listen) (Frontend, error)
}
