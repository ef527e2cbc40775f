package runner

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// DefaultConnectTimeout bounds how long a run waits for a server to answer
// its readiness check before it gives up with exit 3.
const DefaultConnectTimeout = kinds.DefaultConnectTimeout

// Options tune a run.
type Options struct {
	Version        string
	Progress       func(engine.Event)
	ConnectTimeout time.Duration // default DefaultConnectTimeout
	// Runner passes through settings for tests (drain, windows).
	Runner engine.Options
	// Net, when set, carries the embedded servers and every client
	// connection in memory instead of TCP on loopback, so tests can run a
	// whole scenario under testing/synctest's fake clock.
	Net *Net
}

// Net is an in-memory network (memnet.Network's Listen and Dial have
// these shapes). Embedded servers listen on names of their own and wait
// on plain timers, which the fake clock fires exactly.
type Net struct {
	Listen func(ctx context.Context, network, addr string) (net.Listener, error)
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Run measures the plan. The result is returned whenever anything was
// measured, together with the error that stopped the run, so partial
// figures are never lost. Errors carry their exit code.
//
// With several servers every one is started or reached through its kind,
// asked what it has, and given its checked input data before any load is
// sent to any of them: a candidate build that lacks a model stops the run
// before the released one is measured for nothing.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	env := kinds.Env{ConnectTimeout: opts.ConnectTimeout}
	if opts.Net != nil {
		env.Net = &kinds.Net{Listen: opts.Net.Listen, Dial: opts.Net.Dial}
	}
	deps := engine.Deps{Servers: map[string]kinds.Server{}}
	defer func() {
		for _, s := range deps.Servers {
			s.Close()
		}
	}()
	for _, srv := range p.AllServers() {
		k, err := all.Kinds().Lookup(srv.Kind)
		if err != nil {
			return nil, failure.Invalid(err)
		}
		s, err := k.Open(ctx, p.ForServer(srv), env)
		if err != nil {
			if srv.Name != "" {
				return nil, fmt.Errorf("server %s: %w", srv.Name, err)
			}
			return nil, err
		}
		deps.Servers[srv.Name] = s
		for _, n := range s.Notes() {
			if srv.Name != "" {
				n = "server " + srv.Name + ": " + n
			}
			deps.Notes = append(deps.Notes, n)
		}
	}
	ro := opts.Runner
	ro.Version = opts.Version
	ro.Progress = opts.Progress
	return engine.Run(ctx, p, deps, ro)
}
