package runner

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kinds/kserve/wire"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

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

// dial is n's Dial; nil (TCP) without n.
func (n *Net) dial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if n == nil {
		return nil
	}
	return n.Dial
}

// Run measures the plan. The result is returned whenever anything was
// measured, together with the error that stopped the run, so partial
// figures are never lost. Errors carry their exit code.
//
// With several servers every one is started or connected, asked for its
// metadata, models and extensions, and given its checked input data
// before any load is sent to any of them: a candidate build that lacks a
// model stops the run before the released one is measured for nothing.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	if p.OpenAI() {
		return runOpenAI(ctx, p, opts)
	}
	var servers []*prepared
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	for _, srv := range p.AllServers() {
		s, err := prepare(ctx, forServer(p, srv), opts)
		if err != nil {
			if srv.Name != "" {
				return nil, wrapServer(srv.Name, err)
			}
			return nil, err
		}
		servers = append(servers, s)
	}
	inputs := map[string]*inputdata.Data{}
	deps := engine.Deps{
		Inputs: func(pt *plan.Point) (*inputdata.Data, error) {
			d, ok := inputs[inputKey(*pt)]
			if !ok {
				return nil, fmt.Errorf("no input data prepared for point %s", pt.ID)
			}
			return d, nil
		},
	}
	for _, s := range servers {
		for k, d := range s.inputs {
			inputs[k] = d
		}
		sd := s.deps()
		if s.name == "" {
			deps.Client, deps.ClientFor, deps.ServerMetadata, deps.NoServerStats = sd.Client, sd.ClientFor, sd.ServerMetadata, sd.NoServerStats
			deps.Notes = append(deps.Notes, s.neg.notes...)
			continue
		}
		if deps.Servers == nil {
			deps.Servers = map[string]engine.ServerDeps{}
		}
		deps.Servers[s.name] = sd
		for _, n := range s.neg.notes {
			deps.Notes = append(deps.Notes, "server "+s.name+": "+n)
		}
	}
	places := make([]serverPlace, len(servers))
	for i, s := range servers {
		places[i] = serverPlace{key: s.name, embedded: s.ref != nil}
		if s.ref == nil {
			places[i].url = s.plan.Server.URLFor(s.plan.Server.Protocol)
		}
	}
	return runAndRecord(ctx, p, deps, opts, places)
}

// serverPlace says where one server of a run lived: embedded in this
// process, or reached at url. key is its name in the scenario ("" for
// the single unnamed server).
type serverPlace struct {
	key      string
	embedded bool
	url      string
}

// runAndRecord runs p and then records in the result's environment where
// each server lived, so that a result names the URL it measured and never
// the ephemeral address of an embedded server.
func runAndRecord(ctx context.Context, p *plan.Plan, deps engine.Deps, opts Options, places []serverPlace) (*result.Run, error) {
	ro := opts.Runner
	ro.Version = opts.Version
	ro.Progress = opts.Progress
	run, err := engine.Run(ctx, p, deps, ro)
	if run != nil {
		for _, pl := range places {
			info := &run.Environment.Server
			for i := range run.Environment.Servers {
				if run.Environment.Servers[i].Key == pl.key {
					info = &run.Environment.Servers[i]
				}
			}
			info.Embedded = pl.embedded
			info.URL = ""
			if !pl.embedded {
				info.URL = pl.url
			}
		}
	}
	return run, err
}

// prepared is one server made ready for load: started (embedded) or
// reached, its extensions negotiated, its models' input data checked.
type prepared struct {
	name    string
	plan    *plan.Plan // the plan as seen by this server alone
	ref     *refserver.Server
	clients map[plan.Protocol]client.Client
	main    client.Client
	md      *wire.ServerMetadata
	neg     negotiation
	inputs  map[string]*inputdata.Data
}

func (s *prepared) close() {
	for _, c := range s.clients {
		c.Close()
	}
	if s.ref != nil {
		s.ref.Close()
	}
}

func (s *prepared) deps() engine.ServerDeps {
	return engine.ServerDeps{
		Client: s.main,
		ClientFor: func(proto plan.Protocol) (client.Client, error) {
			c, ok := s.clients[proto]
			if !ok {
				return nil, fmt.Errorf("no %s client connected", proto)
			}
			return c, nil
		},
		ServerMetadata: s.md,
		NoServerStats:  !s.neg.serverStats,
	}
}

// forServer is p as one of its servers sees it: that server alone, its
// models and its points. For a plan with one server it is p.
func forServer(p *plan.Plan, srv plan.Server) *plan.Plan {
	if len(p.Servers) == 0 {
		return p
	}
	sub := *p
	sub.Server, sub.Servers = srv, nil
	sub.Models, sub.Points = nil, nil
	for _, m := range p.Models {
		if m.Server == srv.Name {
			sub.Models = append(sub.Models, m)
		}
	}
	for _, pt := range p.Points {
		if pt.Server == srv.Name {
			sub.Points = append(sub.Points, pt)
		}
	}
	return &sub
}

// prepare starts or reaches the one server of p and checks everything the
// run will need of it, before any load.
func prepare(ctx context.Context, p *plan.Plan, opts Options) (_ *prepared, err error) {
	s := &prepared{name: p.Server.Name, plan: p}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	urls := map[plan.Protocol]string{plan.ProtocolHTTP: p.Server.URLFor(plan.ProtocolHTTP), plan.ProtocolGRPC: p.Server.URLFor(plan.ProtocolGRPC)}
	if p.Server.Embedded {
		if s.ref, err = embedded(ctx, p, opts.Net); err != nil {
			return nil, err
		}
		urls[plan.ProtocolHTTP], urls[plan.ProtocolGRPC] = s.ref.HTTPAddr(), s.ref.GRPCAddr()
	}
	if s.clients, err = connect(ctx, p, urls, opts.ConnectTimeout, opts.Net.dial()); err != nil {
		return nil, err
	}
	if s.md, err = readServerMetadata(ctx, s.mainClient(), p); err != nil {
		return nil, err
	}
	if s.neg, err = negotiate(p, s.md); err != nil {
		return nil, err
	}
	if err = applyNegotiation(ctx, p, s.clients, urls, s.neg, opts.Net.dial()); err != nil {
		return nil, err
	}
	s.main = s.mainClient()
	specs := map[string]inputdata.ModelSpec{}
	for _, m := range p.Models {
		spec, err := modelSpec(ctx, s.main, m, s.neg.useConfig)
		if err != nil {
			return nil, err
		}
		specs[m.Alias] = spec
	}
	if err = checkJSONOutputs(p, specs, s.neg); err != nil {
		return nil, err
	}
	if s.inputs, err = loadInputs(p, specs); err != nil {
		return nil, err
	}
	return s, nil
}

// mainClient is the client of the server's protocol, or any client.
func (s *prepared) mainClient() client.Client {
	if c := s.clients[s.plan.Server.Protocol]; c != nil {
		return c
	}
	for _, c := range s.clients {
		return c
	}
	return nil
}

// wrapServer names the server an error is about; the failure kind (and so
// the exit code) is kept.
func wrapServer(name string, err error) error {
	return fmt.Errorf("server %s: %w", name, err)
}
