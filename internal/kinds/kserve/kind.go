package kserve

import (
	"context"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Kind is the KServe v2 (Open Inference Protocol) service kind, with
// Triton's extensions where the server offers them: Triton, MLServer and
// other KServe v2 servers over HTTP and gRPC.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return plan.KindKServe }

// Open starts or reaches the one server of p and checks everything the run
// will need of it, before any load: extensions, models, input data.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	s := &server{plan: p, clients: map[plan.Protocol]client.Client{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	urls := map[plan.Protocol]string{plan.ProtocolHTTP: p.Server().URLFor(plan.ProtocolHTTP), plan.ProtocolGRPC: p.Server().URLFor(plan.ProtocolGRPC)}
	if p.Server().Embedded {
		if s.ref, err = embedded.Start(ctx, p.Server(), env.Net); err != nil {
			return nil, err
		}
		urls[plan.ProtocolHTTP], urls[plan.ProtocolGRPC] = s.ref.HTTPAddr(), s.ref.GRPCAddr()
	}
	if s.clients, err = connect(ctx, p, urls, env.ConnectTimeout, env.Net.DialFunc()); err != nil {
		return nil, err
	}
	if s.md, err = readServerMetadata(ctx, s.mainClient(), p); err != nil {
		return nil, err
	}
	if s.neg, err = negotiate(p, s.md); err != nil {
		return nil, err
	}
	if err = applyNegotiation(ctx, p, s.clients, urls, s.neg, env.Net.DialFunc()); err != nil {
		return nil, err
	}
	// CUDA shared memory needs the runtime and a GPU here: say which is
	// missing before anything is loaded.
	for _, pt := range p.Points {
		if pt.SharedMemory == plan.ShmCUDA {
			if _, err := cudaRuntime(); err != nil {
				return nil, failure.Invalid(fmt.Errorf("point %s: %w", pt.ID, err))
			}
			break
		}
	}
	specs := map[string]inputdata.ModelSpec{}
	for _, m := range p.Models {
		spec, err := modelSpec(ctx, s.mainClient(), m, s.neg.useConfig)
		if err != nil {
			return nil, err
		}
		specs[m.Alias] = spec
	}
	if err = checkJSONOutputs(p, specs, s.neg); err != nil {
		return nil, err
	}
	data, err := loadInputs(p, specs)
	if err != nil {
		return nil, err
	}
	s.inputs = func(pt *plan.Point) (*inputdata.Data, error) {
		d, ok := data[inputKey(*pt)]
		if !ok {
			return nil, fmt.Errorf("no input data prepared for point %s", pt.ID)
		}
		return d, nil
	}
	s.specs = specs
	s.stats = s.neg.serverStats
	s.notes = s.neg.notes
	return s, nil
}

// server is one KServe v2 server made ready for load: started (embedded)
// or reached, its extensions negotiated, its models' input data checked.
type server struct {
	plan    *plan.Plan // the plan as seen by this server alone
	ref     *refserver.Server
	clients map[plan.Protocol]client.Client
	md      *kservev2.ServerMetadata
	neg     negotiation
	inputs  func(*plan.Point) (*inputdata.Data, error)
	specs   map[string]inputdata.ModelSpec // by model alias; nil for FromClient
	stats   bool                           // read statistics around windows
	notes   []string
	shmSeq  int // shared-memory sets made, for unique region names
}

// FromClient is a server already reached through c, for tests of the
// engine: inputs gives each point's data, stats says whether to read the
// server's statistics. The server's metadata is read once, as Open does;
// a server that does not answer is described by its URL alone.
func FromClient(ctx context.Context, p *plan.Plan, c client.Client, inputs func(*plan.Point) (*inputdata.Data, error), stats bool) kinds.Server {
	proto := p.Server().Protocol
	if proto == "" {
		proto = plan.ProtocolHTTP
	}
	s := &server{plan: p, clients: map[plan.Protocol]client.Client{proto: c}, inputs: inputs, stats: stats}
	if md, err := readServerMetadata(ctx, c, p); err == nil {
		s.md = md
	}
	return s
}

func (s *server) Info() result.ServerInfo {
	srv := s.plan.Server()
	info := result.ServerInfo{Key: srv.Name, Embedded: s.ref != nil}
	if s.ref == nil {
		info.URL = srv.URLFor(srv.Protocol)
	}
	if s.md != nil {
		info.Name, info.Version = s.md.Name, s.md.Version
		info.Extensions = append([]string(nil), s.md.Extensions...)
	}
	return info
}

func (s *server) Notes() []string { return s.notes }

// GPUMetricsURL is the scenario's metrics_url: Triton's metrics port,
// whose nv_gpu_* gauges the engine samples (kinds.GPUGauges).
func (s *server) GPUMetricsURL() string { return s.plan.Server().MetricsURL }

func (s *server) Close() error {
	for _, c := range s.clients {
		c.Close()
	}
	if s.ref != nil {
		s.ref.Close()
	}
	return nil
}

// mainClient is the client of the server's protocol, or any client.
func (s *server) mainClient() client.Client {
	if c := s.clients[s.plan.Server().Protocol]; c != nil {
		return c
	}
	for _, c := range s.clients {
		return c
	}
	return nil
}

// clientFor is the client of a point's protocol.
func (s *server) clientFor(proto plan.Protocol) (client.Client, error) {
	if proto == "" {
		return s.mainClient(), nil
	}
	if c, ok := s.clients[proto]; ok {
		return c, nil
	}
	return nil, failure.Invalid(fmt.Errorf("protocol %q: no client for it (the run was given only a %s client)", proto, s.plan.Server().Protocol))
}
