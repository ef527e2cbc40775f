package openai

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
	"github.com/perfscen/perfscen/internal/llmtrace"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Kind is the OpenAI-compatible LLM service kind: chat and text
// completions, streamed, timed token by token.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return plan.KindOpenAI }

// Open starts or reaches the server of p, checks that it serves every
// model of p, and makes every point's requests before any load, so a bad
// input stops the run before the first request.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	if p.LLM == nil {
		return nil, failure.Invalid(fmt.Errorf("plan: kind openai without LLM settings"))
	}
	srv := p.Server()
	s := &server{plan: p, url: srv.URLFor(plan.ProtocolHTTP), inputs: map[llmInputKey]*inputdata.Data{},
		convs: map[string][]Conversation{}, metricsURL: srv.MetricsURL}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if srv.Embedded {
		if s.ref, err = embedded.Start(ctx, srv, env.Net, Mount()); err != nil {
			return nil, err
		}
		s.url = s.ref.HTTPAddr()
		s.metricsURL = "http://" + s.url + llmsim.MetricsPath
	}
	key := p.LLM.APIKey
	if srv.APIKey != "" {
		key = srv.APIKey
	}
	co := Options{URL: s.url, Endpoint: p.LLM.Endpoint, APIKey: key, Headers: srv.Headers,
		Timeout: srv.Timeout, RequireUsage: p.LLM.TokenCount == "usage", Dial: env.Net.DialFunc()}
	field := "server"
	if srv.Name != "" {
		field = "servers." + srv.Name
	}
	if t := srv.TLS; t.Enabled {
		cfg, err := transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s.tls: %w", field, err))
		}
		co.TLS = cfg
	}
	if s.client, err = New(co); err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: %w", field, err))
	}
	if err := kinds.WaitReady(ctx, s.client.Ready, fmt.Sprintf("server at %s (openai)", s.url), env.ConnectTimeout); err != nil {
		return nil, err
	}
	served, err := s.client.Models(ctx)
	if err != nil {
		return nil, failure.Env(fmt.Errorf("listing the server's models: %w", err))
	}
	for _, m := range p.Models {
		if !servedAs(served, m.Name) {
			// The server answered and lacks the model: the scenario's
			// mistake, exit 2, as for every kind.
			return nil, failure.Invalid(fmt.Errorf("model %q (alias %s) is not served at %s (served: %s)",
				m.Name, m.Alias, s.url, strings.Join(served, ", ")))
		}
	}
	for i := range p.Points {
		pt := &p.Points[i]
		k := llmKeyOf(pt)
		if _, done := s.inputs[k]; done {
			continue
		}
		m, ok := p.Model(pt.Model)
		if !ok {
			return nil, failure.Invalid(fmt.Errorf("plan: point %s names no model", pt.ID))
		}
		if m.Conversations != nil {
			if s.convs[m.Alias], err = Conversations(conversationOptions(m.Conversations)); err != nil {
				return nil, failure.Invalid(fmt.Errorf("model %s: %w", m.Alias, err))
			}
		}
		d, err := llmInputs(p, m, pt, s.convs[m.Alias])
		if err != nil {
			return nil, failure.Invalid(err)
		}
		s.inputs[k] = d
	}
	return s, nil
}

func conversationOptions(c *plan.Conversations) ConversationOptions {
	return ConversationOptions{Count: c.Count, Turns: c.Turns, SystemTokens: c.SystemTokens,
		UserMean: c.UserMean, UserStdDev: c.UserStdDev, OutputMean: c.OutputMean, OutputStdDev: c.OutputStdDev,
		Seed: c.Seed, IgnoreEOS: c.IgnoreEOS}
}

// server is one openai-kind server made ready for load.
type server struct {
	plan   *plan.Plan
	url    string
	ref    *refserver.Server
	client *Client
	inputs map[llmInputKey]*inputdata.Data
	// convs are the conversation scripts of multi-turn models, by alias.
	convs map[string][]Conversation
	// metricsURL publishes the engine's Prometheus figures: the
	// scenario's metrics_url, or the embedded engines' /metrics.
	metricsURL string
}

// EngineMetricsURL is where the engine's figures are read through every
// window (kinds.EngineGauges).
func (s *server) EngineMetricsURL() string { return s.metricsURL }

func (s *server) Info() result.ServerInfo {
	info := result.ServerInfo{Key: s.plan.Server().Name, Name: "openai-compatible", Embedded: s.ref != nil,
		Extensions: []string{s.plan.LLM.Endpoint}}
	if s.ref == nil {
		info.URL = s.url
	}
	return info
}

func (s *server) Notes() []string { return nil }

func (s *server) Close() error {
	if s.client != nil {
		s.client.Close()
	}
	if s.ref != nil {
		s.ref.Close()
	}
	return nil
}

// Point hands out the point's prepared request bodies.
func (s *server) Point(_ context.Context, pt *plan.Point) (kinds.Point, error) {
	d, ok := s.inputs[llmKeyOf(pt)]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("no requests prepared for point %s", pt.ID))
	}
	pp := &point{client: s.client, data: d, timeout: s.plan.Server().Timeout}
	if m, ok := s.plan.Model(pt.Model); ok && m.Conversations != nil {
		pp.conv = &convPlan{scripts: s.convs[m.Alias], think: m.Conversations.ThinkTime, ignoreEOS: m.Conversations.IgnoreEOS,
			body: BodyOptions{Model: m.Name, Endpoint: s.plan.LLM.Endpoint, Stream: s.plan.LLM.Stream, IncludeUsage: s.plan.LLM.IncludeUsage}}
	}
	return pp, nil
}

// point is one openai-kind point: its request bodies and the client.
type point struct {
	client  *Client
	data    *inputdata.Data
	timeout time.Duration
	conv    *convPlan // multi-turn models only
}

func (p *point) Data() *inputdata.Data { return p.data }

// Stats: OpenAI-compatible servers have no statistics endpoint.
func (p *point) Stats(context.Context) (kinds.Counters, error) {
	return kinds.Counters{}, kinds.ErrNoStats
}

func (p *point) Close() error { return nil }

func (p *point) NewCaller(context.Context, int) (kinds.Caller, error) {
	if p.conv != nil {
		return &convCaller{p: p}, nil
	}
	return caller{p}, nil
}

// caller sends generation requests; it holds no state of its own, the
// client's connections are shared.
type caller struct{ p *point }

// Call sends a generation request: the step's single input holds the
// prepared JSON body.
func (c caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	in := r.Step.Inputs
	if len(in) != 1 {
		out.Err = fmt.Errorf("generation request %s: want one prepared body, have %d inputs", r.Step.Origin, len(in))
		return
	}
	c.p.send(ctx, clock, in[0].Raw, out)
}

// send sends one prepared body and times it into out.
func (p *point) send(ctx context.Context, clock func() time.Duration, body []byte, out *kinds.Outcome) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	tr := out.Tokens
	if tr == nil {
		tr = &kinds.TokenTrace{}
		out.Tokens = tr
	}
	out.Sent = clock()
	err := p.client.Generate(ctx, body, tr)
	out.Done = clock()
	out.Err = err
	// send/recv is the client writing the request; the wait runs from
	// then to the last chunk, the generation itself.
	if total := out.Done - out.Sent; tr.Written > 0 && tr.Written <= total {
		out.SendRecv, out.Wait = tr.Written, total-tr.Written
	} else {
		out.Wait = total
	}
}

func (caller) Close() error { return nil }

// llmInputKey names the request set of a point: its model, swept lengths
// and (embeddings) inputs a request.
type llmInputKey struct {
	model          string
	in, out, batch int
}

func llmKeyOf(pt *plan.Point) llmInputKey {
	return llmInputKey{pt.Model, pt.InputTokens, pt.OutputTokens, pt.BatchSize}
}

// llmInputs prepares the request bodies of a model at a point, each the
// single BYTES input of one step, so the runner's cursors walk them like
// any data.
func llmInputs(p *plan.Plan, m plan.Model, pt *plan.Point, convs []Conversation) (*inputdata.Data, error) {
	bo := BodyOptions{Model: m.Name, Endpoint: p.LLM.Endpoint, Stream: p.LLM.Stream, IncludeUsage: p.LLM.IncludeUsage}
	var bodies [][]byte
	switch {
	case m.Conversations != nil:
		return conversationData(convs), nil
	case m.Trace != nil:
		t, err := llmtrace.Read(m.Trace.Path)
		if err != nil {
			return nil, traceError(m, err)
		}
		bs := m.Trace.BlockSize
		if m.Trace.LengthScale > 0 {
			t, bs = t.Scaled(m.Trace.LengthScale, bs)
		}
		bodies, err = TraceBodies(t, TraceOptions{BlockSize: bs, Seed: m.Trace.Seed, IgnoreEOS: m.Trace.IgnoreEOS}, bo)
		if err != nil {
			return nil, traceError(m, err)
		}
	case m.Input.Kind == "json":
		for i, path := range m.Input.Paths {
			b, err := LoadPayloads(path, bo)
			if err != nil {
				return nil, payloadError(m, i, err)
			}
			bodies = append(bodies, b...)
		}
	case m.Prompts != nil:
		pr := m.PromptsAt(pt)
		var err error
		sp := Prompts{InputMean: pr.InputMean, InputStdDev: pr.InputStdDev, OutputMean: pr.OutputMean, OutputStdDev: pr.OutputStdDev,
			Count: pr.Count, Seed: pr.Seed, IgnoreEOS: pr.IgnoreEOS, Batch: pt.BatchSize}
		if x := pr.SharedPrefix; x != nil {
			sp.SharedCount, sp.SharedTokens = x.Count, x.Tokens
		}
		bodies, err = Synthetic(sp, bo)
		if err != nil {
			return nil, fmt.Errorf("model %s prompts: %w", m.Alias, err)
		}
	default:
		return nil, fmt.Errorf("model %s: no prompts and no input data", m.Alias)
	}
	steps := make([]inputdata.Step, len(bodies))
	for i, b := range bodies {
		steps[i] = inputdata.Step{Inputs: []tensor.Tensor{{Name: "payload", DataType: tensor.BYTES, Shape: []int64{1}, Raw: b}},
			Origin: fmt.Sprintf("request %d", i+1)}
	}
	return &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}, nil
}

// traceError places a trace's error where the scenario names the file.
func traceError(m plan.Model, err error) error {
	if m.Trace.Where != "" {
		return fmt.Errorf("%s: %w", m.Trace.Where, err)
	}
	return fmt.Errorf("model %s trace: %w", m.Alias, err)
}

// payloadError places a bad input-data file's error where the scenario
// names the file.
func payloadError(m plan.Model, i int, err error) error {
	if i < len(m.Input.Where) {
		return fmt.Errorf("%s: %w", m.Input.Where[i], err)
	}
	return fmt.Errorf("model %s input data: %w", m.Alias, err)
}

// Check reads every OpenAI input-data file of p as Open will, so perfscen
// validate reports a bad one: its line and, for a wrong entry, its place
// (data[3].payload[0]), under the scenario line naming the file.
func (Kind) Check(p *plan.Plan) error {
	if p.LLM == nil {
		return nil
	}
	var errs []error
	for _, m := range p.Models {
		if m.Input.Kind != "json" {
			continue
		}
		bo := BodyOptions{Model: m.Name, Endpoint: p.LLM.Endpoint, Stream: p.LLM.Stream, IncludeUsage: p.LLM.IncludeUsage}
		for i, path := range m.Input.Paths {
			if _, err := LoadPayloads(path, bo); err != nil {
				errs = append(errs, payloadError(m, i, err))
			}
		}
	}
	return failure.Invalid(errors.Join(errs...))
}

// servedAs reports whether a model requested as name is among served.
// Servers that tag their models (Ollama: "tiny:latest") accept the bare
// name for the default tag, so "tiny" is served when "tiny:latest" is.
func servedAs(served []string, name string) bool {
	if slices.Contains(served, name) {
		return true
	}
	return !strings.Contains(name, ":") && slices.Contains(served, name+":latest")
}
