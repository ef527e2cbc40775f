package main

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
	"github.com/perfscen/perfscen/internal/refserver"
)

func init() { register(newServeCmd) }

type serveFlags struct {
	host               string
	httpPort, grpcPort int
	metricsPort        int
	models             []string
	repository         []string
	params             []string
	tlsCert, tlsKey    string
	tlsClientCA        string
	flavor             string
	endpoints          []string
}

func newServeCmd(e *env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use: "serve",
		Example: `  perfscen serve                                  # HTTP 127.0.0.1:8000, gRPC :8001, every built-in model
  perfscen serve --http-port 9000 --grpc-port -1   # HTTP only
  perfscen serve --metrics-port 8002               # also Prometheus metrics on :8002/metrics
  perfscen serve --model-param delay.delay=5ms --model-param simple.error_rate=0.01
  perfscen serve --flavor kserve                   # plain KServe v2: no Triton extensions, JSON tensors
  curl localhost:8000/v2/health/ready
  perfscen serve --model-param llm.decode_slowdown=1.1   # the simulated LLM engine, 10% slower decode
  curl localhost:8000/v1/chat/completions -d '{"model": "llm", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}'`,
		Short: "Run the built-in Triton-compatible reference server",
		Long: `serve runs perfscen's reference inference server: KServe v2 over HTTP and
gRPC with Triton's extensions (binary data, statistics, system shared memory,
model configuration and repository, sequences, CUDA shared memory cleanup
without GPUs), Prometheus metrics with Triton's names (--metrics-port), and
built-in models, Triton's example models among them:
` + strings.Join(refserver.BuiltinModels(), ", ") + `.

--flavor kserve serves the core KServe v2 protocol only, as servers without
Triton's extensions do: server metadata lists no extensions, HTTP tensors are
JSON only, and there are no model configuration, statistics, repository or
shared-memory endpoints.

Model parameters (--model-param model.key=value) tune service time and
inject faults, e.g. delay.delay=5ms, simple.error_rate=0.01.

OpenAI-compatible endpoints, on the HTTP port (server.kind: openai):
  GET  /v1/models             the simulated engines: ` + strings.Join(llmsim.Models(), ", ") + `
  POST /v1/completions        "prompt"
  POST /v1/chat/completions   "messages"
  POST /v1/embeddings         "input" (a string or a list): one vector per input
  GET  /metrics               the engines' figures under vLLM's names
Completions answer whole or streamed ("stream": true: server-sent events, one chunk
per chunk_tokens tokens, usage when stream_options.include_usage is set,
then [DONE]); max_tokens and ignore_eos are honoured. The engines simulate
continuous batching: a step decodes one token of every running sequence in
(decode_base + decode_per_seq × running) × decode_slowdown, and sequences
admitted at a step add prefill_base + prefill_per_token × prompt tokens to
it, less the leading prompt blocks found in the prefix cache
(prefix_cache=off: none are). llm_fp8 is llm with a 25% faster decode. Their parameters, with
defaults (--model-param llm.decode_slowdown=1.1):
` + llmsim.ParamHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(e, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "address to listen on")
	fl.IntVar(&f.httpPort, "http-port", 8000, "HTTP port (0 picks a free port, -1 disables HTTP)")
	fl.IntVar(&f.grpcPort, "grpc-port", 8001, "gRPC port (0 picks a free port, -1 disables gRPC)")
	fl.IntVar(&f.metricsPort, "metrics-port", -1, "Prometheus metrics port, GET /metrics (Triton uses 8002; 0 picks a free port, -1 disables)")
	fl.StringSliceVar(&f.models, "models", nil, "models to load (default all in the repository)")
	fl.StringSliceVar(&f.repository, "repository", nil, "built-in models the model repository holds (default all); others do not exist")
	fl.StringArrayVar(&f.params, "model-param", nil, "model parameter model.key=value (repeatable)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate: serve both protocols over TLS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key for --tls-cert")
	fl.StringVar(&f.flavor, "flavor", "triton", "server imitated: triton (KServe v2 with Triton's extensions), kserve (core KServe v2 only), or a service kind with an API of its own ("+strings.Join(flavourKinds(), ", ")+")")
	fl.StringArrayVar(&f.endpoints, "endpoint", nil, "a kind flavour's listener, name=host:port (repeatable; e.g. grpc=127.0.0.1:8500); names default to the kind's usual ports")
	fl.StringVar(&f.tlsClientCA, "tls-client-ca", "", "PEM CA bundle: require client certificates signed by it")
	return cmd
}

func (f serveFlags) options() (refserver.Options, error) {
	// The OpenAI-compatible simulated engines answer on the HTTP port too.
	opts := refserver.Options{Version: version, Models: f.models, Repository: f.repository,
		Mounts: []refserver.Mount{openai.Mount()}}
	addr := func(port int, flag string) (string, error) {
		switch {
		case port == -1:
			return "-", nil
		case port < 0 || port > 65535:
			return "", fmt.Errorf("--%s %d: not a port number", flag, port)
		}
		return net.JoinHostPort(f.host, strconv.Itoa(port)), nil
	}
	var err error
	if opts.Flavor, err = refserver.ParseFlavor(f.flavor); err != nil {
		return opts, fmt.Errorf("--flavor: %w", err)
	}
	if opts.HTTPAddr, err = addr(f.httpPort, "http-port"); err != nil {
		return opts, err
	}
	if opts.GRPCAddr, err = addr(f.grpcPort, "grpc-port"); err != nil {
		return opts, err
	}
	if opts.MetricsAddr, err = addr(f.metricsPort, "metrics-port"); err != nil {
		return opts, err
	}
	if opts.ModelParams, err = parseModelParams(f.params); err != nil {
		return opts, err
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return opts, fmt.Errorf("--tls-cert and --tls-key must be given together")
	}
	if f.tlsClientCA != "" && f.tlsCert == "" {
		return opts, fmt.Errorf("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if f.tlsCert != "" {
		opts.TLS = &refserver.TLSOptions{CertFile: f.tlsCert, KeyFile: f.tlsKey, ClientCAFile: f.tlsClientCA}
	}
	return opts, nil
}

// parseModelParams turns model.key=value flags into the per-model map.
func parseModelParams(flags []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, p := range flags {
		lhs, value, ok := strings.Cut(p, "=")
		model, key, ok2 := strings.Cut(lhs, ".")
		if !ok || !ok2 || model == "" || key == "" {
			return nil, fmt.Errorf("--model-param %q: want model.key=value", p)
		}
		if out[model] == nil {
			out[model] = map[string]string{}
		}
		out[model][key] = value
	}
	return out, nil
}

func runServe(e *env, f serveFlags) error {
	if k, ok := flavourKind(f.flavor); ok {
		return serveFlavour(e, f, k)
	}
	if len(f.endpoints) > 0 {
		return exitcode.AsInvalid(fmt.Errorf("--endpoint applies to the flavours of other kinds (%s), not to %s", strings.Join(flavourKinds(), ", "), f.flavor))
	}
	opts, err := f.options()
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	srv, err := refserver.New(opts)
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	if err := srv.Start(e.ctx); err != nil {
		srv.Close()
		return exitcode.AsEnvironment(err)
	}
	scheme := "http"
	if opts.TLS != nil {
		scheme = "https"
	}
	if a := srv.HTTPAddr(); a != "" {
		fmt.Fprintf(e.stdout, "Started HTTPService at %s://%s\n", scheme, a)
	}
	if a := srv.GRPCAddr(); a != "" {
		fmt.Fprintf(e.stdout, "Started GRPCInferenceService at %s\n", a)
	}
	if a := srv.MetricsAddr(); a != "" {
		fmt.Fprintf(e.stdout, "Started Metrics Service at %s\n", a)
	}
	<-e.ctx.Done()
	fmt.Fprintln(e.stdout, "shutting down")
	if err := srv.Close(); err != nil {
		return exitcode.AsEnvironment(fmt.Errorf("closing server: %w", err))
	}
	return nil
}

// flavourKinds are the kinds with an embedded API of their own.
func flavourKinds() []string {
	var out []string
	set := all.Kinds()
	for _, name := range set.Names() {
		if _, ok := flavourKind(name); ok {
			out = append(out, name)
		}
	}
	return out
}

func flavourKind(name string) (embedded.Flavour, bool) {
	k, err := all.Kinds().Lookup(name)
	if err != nil || name == "" {
		return nil, false
	}
	fl, ok := k.(embedded.Flavour)
	return fl, ok
}

// serveFlavour serves the built-in models through another kind's API.
func serveFlavour(e *env, f serveFlags, k embedded.Flavour) error {
	params, err := parseModelParams(f.params)
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	if f.tlsCert != "" || f.tlsClientCA != "" {
		return exitcode.AsInvalid(fmt.Errorf("--tls-cert: the %s flavour serves plain text only", k.Name()))
	}
	addrs := map[string]string{}
	for _, ep := range f.endpoints {
		name, addr, ok := strings.Cut(ep, "=")
		if !ok || name == "" || addr == "" {
			return exitcode.AsInvalid(fmt.Errorf("--endpoint %q: want name=host:port", ep))
		}
		addrs[name] = addr
	}
	core, err := refserver.New(refserver.Options{Version: version, Models: f.models, Repository: f.repository,
		ModelParams: params, HTTPAddr: "-", GRPCAddr: "-"})
	if err != nil {
		return exitcode.AsInvalid(err)
	}
	defer core.Close()
	fe, err := k.ServeFlavour(e.ctx, core, addrs, nil)
	if err != nil {
		return err
	}
	eps := fe.Endpoints()
	for _, name := range slices.Sorted(maps.Keys(eps)) {
		fmt.Fprintf(e.stdout, "Started %s %s at %s\n", k.Name(), name, eps[name])
	}
	<-e.ctx.Done()
	fmt.Fprintln(e.stdout, "shutting down")
	if err := fe.Close(); err != nil {
		return exitcode.AsEnvironment(fmt.Errorf("closing server: %w", err))
	}
	return nil
}
