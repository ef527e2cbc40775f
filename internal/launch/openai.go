package launch

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/client"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kserve"
	"github.com/perfscen/perfscen/internal/openai"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
	"github.com/perfscen/perfscen/runner"
)

// runOpenAI measures an openai-kind plan: the same runner, with a client
// that speaks the OpenAI-compatible API and request bodies prepared here.
func runOpenAI(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	if p.LLM == nil {
		return nil, failure.Invalid(fmt.Errorf("plan: kind openai without LLM settings"))
	}
	url := p.Server.URL
	if p.Server.Embedded {
		srv, err := embedded(ctx, p, opts.Net)
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		url = srv.HTTPAddr()
	}
	co := openai.Options{URL: url, Endpoint: p.LLM.Endpoint, APIKey: p.LLM.APIKey, Headers: p.Server.Headers,
		Timeout: p.Server.Timeout, RequireUsage: p.LLM.TokenCount == "usage", Dial: opts.Net.dial()}
	if t := p.Server.TLS; t.Enabled {
		cfg, err := client.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("server.tls: %w", err))
		}
		co.TLS = cfg
	}
	c, err := openai.New(co)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("server: %w", err))
	}
	defer c.Close()
	if err := waitReady(ctx, c, "openai", url, opts.ConnectTimeout); err != nil {
		return nil, err
	}
	served, err := c.Models(ctx)
	if err != nil {
		return nil, failure.Env(fmt.Errorf("listing the server's models: %w", err))
	}
	for _, m := range p.Models {
		if !contains(served, m.Name) {
			return nil, failure.Env(fmt.Errorf("model %q (alias %s) is not served at %s (served: %s)",
				m.Name, m.Alias, url, strings.Join(served, ", ")))
		}
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
	deps := runner.Deps{
		Client: c,
		Inputs: func(pt *plan.Point) (*inputdata.Data, error) {
			d, ok := inputs[llmKeyOf(pt)]
			if !ok {
				return nil, fmt.Errorf("no requests prepared for point %s", pt.ID)
			}
			return d, nil
		},
	}
	ro := opts.Runner
	ro.Version = opts.Version
	ro.Progress = opts.Progress
	run, err := runner.Run(ctx, p, deps, ro)
	if run != nil {
		run.Environment.Server.Embedded = p.Server.Embedded
		if !p.Server.Embedded {
			run.Environment.Server.URL = p.Server.URL
		}
	}
	return run, err
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
		steps[i] = inputdata.Step{Inputs: []kserve.Tensor{{Name: "payload", DataType: kserve.BYTES, Shape: []int64{1}, Raw: b}},
			Origin: fmt.Sprintf("request %d", i+1)}
	}
	return &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}, nil
}
