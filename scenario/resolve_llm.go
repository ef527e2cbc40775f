package scenario

import (
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// Defaults of the openai kind.
const (
	DefaultEndpoint    = "v1/chat/completions"
	DefaultPromptCount = 100
)

// resolveLLM sets the service kind and, for openai, the LLM settings and
// each model's prompts; it rejects KServe-only settings on an openai
// server and LLM settings on a KServe one.
func resolveLLM(s *Scenario, c *collector, r *resolved, getenv func(string) string) {
	sp := path{"server"}
	// Kind stays "" for KServe, the default, so existing plans read as before.
	// With servers, every server has one kind (resolveServers says so
	// when they differ, and nothing more is said here of a mixed set).
	openaiKind := s.Server.Kind == plan.KindOpenAI
	if len(s.Servers) > 0 {
		n := 0
		for _, srv := range r.servers {
			if srv.Kind == plan.KindOpenAI {
				n++
			}
		}
		if n > 0 && n < len(r.servers) {
			return
		}
		openaiKind = n > 0
	}
	if !openaiKind {
		if s.Server.Endpoint != "" && len(s.Servers) == 0 {
			c.atKey(sp.child("endpoint"), "applies only with kind: openai")
		}
		if s.Server.APIKeyEnv != "" && len(s.Servers) == 0 {
			c.atKey(sp.child("api_key_env"), "applies only with kind: openai")
		}
		if s.LLM != nil {
			c.atKey(path{"llm"}, "applies only with server.kind: openai")
		}
		for i, m := range s.Models {
			for _, k := range []struct {
				set  bool
				name string
			}{{m.Prompts != nil, "prompts"}, {m.Trace != nil, "trace"}, {m.Conversations != nil, "conversations"}} {
				if k.set {
					c.atKey(path{"models", i, k.name}, "applies only with server.kind: openai")
				}
			}
		}
		for _, k := range []struct {
			set  bool
			name string
		}{{len(s.Sweep.InputTokens) > 0, "input_tokens"}, {len(s.Sweep.OutputTokens) > 0, "output_tokens"}} {
			if k.set {
				c.atKey(path{"sweep", k.name}, "a token-length sweep applies only with server.kind: openai")
			}
		}
		return
	}
	r.server.Kind = plan.KindOpenAI
	l := &plan.LLM{Stream: true, IncludeUsage: true, TokenCount: "auto"}
	if len(s.Servers) == 0 {
		l.Endpoint = s.Server.Endpoint
		if l.Endpoint == "" {
			l.Endpoint = DefaultEndpoint
		}
		l.APIKeyEnv, l.APIKey = llmServer(s.Server, sp, c, getenv)
	}
	for i := range r.servers {
		srv := &r.servers[i]
		in, p := s.Servers[srv.Name], path{"servers", srv.Name}
		ep := in.Endpoint
		if ep == "" {
			ep = DefaultEndpoint
		}
		// Every request body is built for one API; arms calling two
		// APIs would compare the APIs, not the builds.
		if i == 0 {
			l.Endpoint = ep
		} else if ep != l.Endpoint {
			what := ep
			if in.Endpoint == "" {
				what += " (the default)"
			}
			c.at(p.child("endpoint"), "is %s but servers.%s.endpoint is %s; compared arms must call the same API, so give every server the same endpoint", what, r.servers[0].Name, l.Endpoint)
		}
		// Each build may sit behind its own key.
		srv.APIKeyEnv, srv.APIKey = llmServer(in, p, c, getenv)
	}
	kserveOnly := []struct {
		set  bool
		p    path
		what string
	}{
		{s.Load.SharedMemory != "" && s.Load.SharedMemory != "none", path{"load", "shared_memory"}, "shared memory"},
		{s.Load.Streaming, path{"load", "streaming"}, "gRPC streaming (set llm.stream for server-sent events)"},
		{len(s.Sweep.Protocol) > 0, path{"sweep", "protocol"}, "a protocol sweep"},
		{len(s.Sweep.SharedMemory) > 0, path{"sweep", "shared_memory"}, "a shared-memory sweep"},
		{len(s.Sweep.BatchSize) > 0 && l.Endpoint != plan.EndpointEmbeddings, path{"sweep", "batch_size"}, "a batch-size sweep (with kind openai: of the embeddings endpoint's inputs a request)"},
		{len(s.Sweep.Shapes) > 0, path{"sweep", "shapes"}, "a shape sweep"},
	}
	for _, k := range kserveOnly {
		if k.set {
			c.atKey(k.p, "%s applies only to kind kserve", k.what)
		}
	}
	if in := s.LLM; in != nil {
		p := path{"llm"}
		if in.Stream != nil {
			l.Stream = *in.Stream
		}
		if in.IncludeUsage != nil {
			l.IncludeUsage = *in.IncludeUsage
		}
		if in.TokenCount != "" {
			l.TokenCount = in.TokenCount
		}
		// A streamed reply carries usage only when asked for it: with
		// token_count usage every request would fail.
		if l.Stream && !l.IncludeUsage && l.TokenCount == "usage" {
			c.at(p.child("include_usage"), "must be true with token_count: usage and streaming: streaming servers send usage only when include_usage asks for it, so every request would fail")
		}
		if g := in.Goodput; g != nil {
			slo := &plan.SLO{}
			for _, f := range []struct {
				name, v string
				dst     *time.Duration
			}{{"ttft", g.TTFT, &slo.TTFT}, {"itl", g.ITL, &slo.ITL}, {"e2e", g.E2E, &slo.E2E}} {
				if f.v == "" {
					continue
				}
				d, err := ParseDuration(f.v)
				switch {
				case err != nil:
					c.at(p.child("goodput", f.name), "%v", err)
				case d <= 0:
					c.at(p.child("goodput", f.name), "must be > 0")
				default:
					*f.dst = d
				}
			}
			l.Goodput = slo
		}
	}
	if l.Endpoint == plan.EndpointEmbeddings {
		// An embedding is one reply: nothing streams, no token is
		// generated.
		if s.LLM != nil && s.LLM.Stream != nil && *s.LLM.Stream {
			c.at(path{"llm", "stream"}, "the embeddings endpoint does not stream")
		}
		if s.LLM != nil && s.LLM.Goodput != nil && (s.LLM.Goodput.TTFT != "" || s.LLM.Goodput.ITL != "") {
			c.atKey(path{"llm", "goodput"}, "the embeddings endpoint generates no tokens: only e2e applies")
		}
		l.Stream, l.IncludeUsage = false, false
	}
	r.llm = l
	sw := tokenSweep{in: len(s.Sweep.InputTokens) > 0, out: len(s.Sweep.OutputTokens) > 0}
	for i, m := range s.Models {
		resolveLLMModel(m, c, path{"models", i}, &r.models[i], l, sw)
	}
}

// tokenSweep says which prompt lengths the sweep sets.
type tokenSweep struct{ in, out bool }

// maxTokenLength bounds a swept length: a typo must not plan prompts of
// billions of words.
const maxTokenLength = 1 << 20

func resolveLLMModel(m Model, c *collector, p path, pm *plan.Model, l *plan.LLM, sw tokenSweep) {
	switch {
	case m.BatchSize > 1 && l.Endpoint != plan.EndpointEmbeddings:
		c.at(p.child("batch_size"), "kind openai sends one prompt per request (the embeddings endpoint alone takes batch_size inputs a request)")
	case len(m.Shapes) > 0:
		c.atKey(p.child("shapes"), "applies only to kind kserve")
	case m.ValidateOutputs:
		c.atKey(p.child("validate_outputs"), "applies only to kind kserve")
	case m.Sequence:
		c.atKey(p.child("sequence"), "applies only to kind kserve")
	case m.StringLength != 0 || m.StringData != "":
		c.atKey(p.child("string_length"), "string_length and string_data apply only to kind kserve")
	}
	if src := workloadSources(m); len(src) > 1 {
		c.atKey(p.child(src[1]), "give one of prompts, input_data, trace and conversations (this model has %s and %s)", src[0], src[1])
		return
	}
	if l.Endpoint == plan.EndpointEmbeddings && (m.Trace != nil || m.Conversations != nil || len(m.InputData) > 0) {
		c.at(p, "the embeddings endpoint takes synthetic prompts only (prompts.input_tokens; batch_size inputs a request)")
		return
	}
	if m.Trace != nil || m.Conversations != nil {
		if sw.in || sw.out {
			c.at(p, "sweep.input_tokens and sweep.output_tokens set the lengths of synthetic prompts; a trace or conversations keep their own")
		}
		return // resolveWorkloads reads them once the load is known
	}
	switch pm.Input.Kind {
	case "json":
		if m.Prompts != nil {
			c.atKey(p.child("prompts"), "give prompts or input_data, not both")
		}
		payloadWhere(m, c, p.child("input_data"), pm)
		if sw.in || sw.out {
			c.at(p.child("input_data"), "sweep.input_tokens and sweep.output_tokens set the lengths of synthetic prompts; this model's requests come from input_data, which keeps its own (give the model prompts instead)")
		}
		return
	case "random":
		if len(m.InputData) > 0 {
			c.at(p.child("input_data"), "kind openai takes a perf_analyzer OpenAI input-data file ({\"data\": [{\"payload\": [...]}]}), not %q", m.InputData[0])
			return
		}
	case "zero":
		c.at(p.child("input_data"), "kind openai takes a perf_analyzer OpenAI input-data file, not %q", m.InputData[0])
		return
	case "dir":
		c.at(p.child("input_data"), "kind openai takes a perf_analyzer OpenAI input-data file, not a directory")
		return
	}
	in := m.Prompts
	if in == nil {
		if !sw.in {
			c.atKey(p, "kind openai needs prompts (synthetic lengths), input_data (perf_analyzer's OpenAI payload JSON), a trace or conversations")
			return
		}
		// The sweep gives the lengths; the other settings keep their defaults.
		in = &Prompts{}
	}
	pp := p.child("prompts")
	switch {
	case sw.in && in.InputTokens.Mean != 0:
		c.atKey(pp.child("input_tokens", "mean"), "is set by sweep.input_tokens as well; give it in one place")
	case !sw.in && in.InputTokens.Mean == 0:
		c.at(pp, "needs input_tokens.mean (or sweep.input_tokens)")
	}
	if o := in.OutputTokens; o != nil {
		switch {
		case sw.out && o.Mean != 0:
			c.atKey(pp.child("output_tokens", "mean"), "is set by sweep.output_tokens as well; give it in one place")
		case !sw.out && o.Mean == 0:
			c.at(pp.child("output_tokens"), "needs mean (or sweep.output_tokens)")
		}
	}
	pr := &plan.Prompts{InputMean: in.InputTokens.Mean, InputStdDev: in.InputTokens.StdDev, Count: in.Count, Seed: 1}
	if pr.Count == 0 {
		pr.Count = DefaultPromptCount
	}
	if in.Seed != nil {
		pr.Seed = *in.Seed
	}
	if in.OutputTokens != nil {
		pr.OutputMean, pr.OutputStdDev = in.OutputTokens.Mean, in.OutputTokens.StdDev
	}
	if sp := in.SharedPrefix; sp != nil {
		pr.SharedPrefix = &plan.SharedPrefix{Count: sp.Count, Tokens: sp.Tokens}
		if pr.SharedPrefix.Count == 0 {
			pr.SharedPrefix.Count = 1
		}
	}
	if l.Endpoint == plan.EndpointEmbeddings && in.OutputTokens != nil {
		c.atKey(pp.child("output_tokens"), "does not apply to the embeddings endpoint: nothing is generated")
	}
	// Pinned output lengths keep runs comparable (docs/llm.md).
	pr.IgnoreEOS = in.OutputTokens != nil || sw.out
	if in.IgnoreEOS != nil {
		if *in.IgnoreEOS && in.OutputTokens == nil && !sw.out {
			c.at(p.child("prompts", "ignore_eos"), "needs output_tokens: without max_tokens a request ignoring end-of-sequence may never end")
		}
		pr.IgnoreEOS = *in.IgnoreEOS
	}
	pm.Prompts = pr
}

// payloadWhere records where the scenario names each OpenAI input-data
// file, so the kind, which reads them, reports a bad file at that line.
func payloadWhere(m Model, c *collector, p path, pm *plan.Model) {
	for i := range pm.Input.Paths {
		at := p
		if len(m.InputData) > 1 && len(m.InputData) == len(pm.Input.Paths) {
			at = p.child(i)
		}
		pm.Input.Where = append(pm.Input.Where, c.where(at))
	}
}

// llmServer checks the keys of one openai-kind server that KServe reads
// differently, and returns its API key and the variable it came from.
func llmServer(in Server, p path, c *collector, getenv func(string) string) (env, key string) {
	if name := in.APIKeyEnv; name != "" {
		key = getenv(name)
		if key == "" {
			c.at(p.child("api_key_env"), "environment variable %s is not set", name)
		}
		env = name
	}
	if plan.Protocol(in.Protocol) == plan.ProtocolGRPC {
		c.at(p.child("protocol"), "kind openai speaks HTTP only")
	}
	if in.TensorFormat != "" {
		c.atKey(p.child("tensor_format"), "applies only to kind kserve")
	}
	return env, key
}

// workloadSources names the request sources a model gives, in the order
// the scenario reference lists them.
func workloadSources(m Model) []string {
	var out []string
	for _, k := range []struct {
		set  bool
		name string
	}{{m.Prompts != nil, "prompts"}, {len(m.InputData) > 0, "input_data"}, {m.Trace != nil, "trace"}, {m.Conversations != nil, "conversations"}} {
		if k.set {
			out = append(out, k.name)
		}
	}
	return out
}
