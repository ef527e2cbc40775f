package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// runOpenAI measures an openai-kind plan: the same runner, with a client
// that speaks the OpenAI-compatible API and request bodies prepared here.
//
// With several servers each is started or reached and its model list
// checked before any load is sent to any of them, as for KServe servers.
func runOpenAI(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	if p.LLM == nil {
		return nil, failure.Invalid(fmt.Errorf("plan: kind openai without LLM settings"))
	}
	var servers []*llmServer
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	for _, srv := range p.AllServers() {
		s, err := prepareOpenAI(ctx, p, srv, opts)
		if err != nil {
			if srv.Name != "" {
				return nil, wrapServer(srv.Name, err)
			}
			return nil, err
		}
		servers = append(servers, s)
	}
	// Every point's requests are made before any load, so a bad input
	// stops the run before the first request.
	inputs := map[llmInputKey]*inputdata.Data{}
	for i := range p.Points {
		pt := &p.Points[i]
		k := llmKeyOf(pt)
		if _, done := inputs[k]; done {
			continue
		}
		m, ok := p.Model(pt.Model)
		if !ok {
			return nil, failure.Invalid(fmt.Errorf("plan: point %s names no model", pt.ID))
		}
		d, err := llmInputs(p, m, pt)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("model %s input: %w", m.Alias, err))
		}
		inputs[k] = d
	}
	deps := engine.Deps{
		Inputs: func(pt *plan.Point) (*inputdata.Data, error) {
			d, ok := inputs[llmKeyOf(pt)]
			if !ok {
				return nil, fmt.Errorf("no requests prepared for point %s", pt.ID)
			}
			return d, nil
		},
	}
	for _, s := range servers {
		if s.srv.Name == "" {
			deps.Client = s.client
			continue
		}
		if deps.Servers == nil {
			deps.Servers = map[string]engine.ServerDeps{}
		}
		deps.Servers[s.srv.Name] = engine.ServerDeps{Client: s.client}
	}
	places := make([]serverPlace, len(servers))
	for i, s := range servers {
		places[i] = serverPlace{key: s.srv.Name, embedded: s.ref != nil, url: s.url}
	}
	return runAndRecord(ctx, p, deps, opts, places)
}

// llmServer is one openai-kind server made ready for load.
type llmServer struct {
	srv    plan.Server
	url    string
	ref    *refserver.Server
	client *openai.Client
}

func (s *llmServer) close() {
	if s.client != nil {
		s.client.Close()
	}
	if s.ref != nil {
		s.ref.Close()
	}
}

// prepareOpenAI starts or reaches srv and checks that it serves every
// model of the plan that names it.
func prepareOpenAI(ctx context.Context, p *plan.Plan, srv plan.Server, opts Options) (_ *llmServer, err error) {
	s := &llmServer{srv: srv, url: srv.URLFor(plan.ProtocolHTTP)}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	sub := forServer(p, srv)
	if srv.Embedded {
		if s.ref, err = embedded(ctx, sub, opts.Net); err != nil {
			return nil, err
		}
		s.url = s.ref.HTTPAddr()
	}
	key := p.LLM.APIKey
	if srv.APIKey != "" {
		key = srv.APIKey
	}
	co := openai.Options{URL: s.url, Endpoint: p.LLM.Endpoint, APIKey: key, Headers: srv.Headers,
		Timeout: srv.Timeout, RequireUsage: p.LLM.TokenCount == "usage", Dial: opts.Net.dial()}
	field := "server"
	if srv.Name != "" {
		field = "servers." + srv.Name
	}
	if t := srv.TLS; t.Enabled {
		cfg, err := client.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s.tls: %w", field, err))
		}
		co.TLS = cfg
	}
	if s.client, err = openai.New(co); err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: %w", field, err))
	}
	if err := waitReady(ctx, s.client, "openai", s.url, opts.ConnectTimeout); err != nil {
		return nil, err
	}
	served, err := s.client.Models(ctx)
	if err != nil {
		return nil, failure.Env(fmt.Errorf("listing the server's models: %w", err))
	}
	for _, m := range sub.Models {
		if !contains(served, m.Name) {
			return nil, failure.Env(fmt.Errorf("model %q (alias %s) is not served at %s (served: %s)",
				m.Name, m.Alias, s.url, strings.Join(served, ", ")))
		}
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// llmInputKey names the request set of a point: its model and swept lengths.
type llmInputKey struct {
	model   string
	in, out int
}

func llmKeyOf(pt *plan.Point) llmInputKey {
	return llmInputKey{pt.Model, pt.InputTokens, pt.OutputTokens}
}

// llmInputs prepares the request bodies of a model at a point, each the
// single BYTES input of one step, so the runner's cursors walk them like
// any data.
func llmInputs(p *plan.Plan, m plan.Model, pt *plan.Point) (*inputdata.Data, error) {
	bo := openai.BodyOptions{Model: m.Name, Endpoint: p.LLM.Endpoint, Stream: p.LLM.Stream, IncludeUsage: p.LLM.IncludeUsage}
	var bodies [][]byte
	switch {
	case m.Input.Kind == "json":
		for _, path := range m.Input.Paths {
			b, err := openai.LoadPayloads(path, bo)
			if err != nil {
				return nil, err
			}
			bodies = append(bodies, b...)
		}
	case m.Prompts != nil:
		pr := m.PromptsAt(pt)
		var err error
		bodies, err = openai.Synthetic(openai.Prompts{InputMean: pr.InputMean, InputStdDev: pr.InputStdDev,
			OutputMean: pr.OutputMean, OutputStdDev: pr.OutputStdDev, Count: pr.Count, Seed: pr.Seed, IgnoreEOS: pr.IgnoreEOS}, bo)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("no prompts and no input data")
	}
	steps := make([]inputdata.Step, len(bodies))
	for i, b := range bodies {
		steps[i] = inputdata.Step{Inputs: []tensor.Tensor{{Name: "payload", DataType: tensor.BYTES, Shape: []int64{1}, Raw: b}},
			Origin: fmt.Sprintf("request %d", i+1)}
	}
	return &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}, nil
}
