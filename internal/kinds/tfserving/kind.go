package tfserving

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// KindName is the scenario's server.kind for TensorFlow Serving.
const KindName = "tfserving"

// serverName is what results record as the server's name: TF Serving has
// no API that reports its own name or version.
const serverName = "tensorflow-serving"

// Kind is the TensorFlow Serving service kind.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return KindName }

// server is one TF Serving server made ready for load.
type server struct {
	plan   *plan.Plan
	set    settings
	core   *refserver.Server
	fe     embedded.Frontend
	urls   map[plan.Protocol]string
	apis   map[plan.Protocol]api
	models map[string]*modelState // by alias
	// prepared holds each point's requests by input key and protocol,
	// built before any load.
	prepared map[string]*prepared
	stats    *promStats
	notes    []string
}

// modelState is what Open learned of one model.
type modelState struct {
	model plan.Model
	ref   modelRef
	sig   *signature
	spec  inputdata.ModelSpec
}

// Open starts (embedded) or reaches the server of p and checks, before any
// load, that it is TF Serving, that every model serves, has the signature
// and takes the input data, and that every request can be written.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	set, err := readSettings(p.Server())
	if err != nil {
		return nil, err
	}
	if err := checkPlan(p); err != nil {
		return nil, err
	}
	s := &server{plan: p, set: set, urls: map[plan.Protocol]string{}, apis: map[plan.Protocol]api{},
		models: map[string]*modelState{}, prepared: map[string]*prepared{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	srv := p.Server()
	metricsURL := srv.MetricsURL
	for _, proto := range []plan.Protocol{plan.ProtocolGRPC, plan.ProtocolHTTP} {
		s.urls[proto] = srv.URLFor(proto)
	}
	if srv.Embedded {
		if err := s.startEmbedded(ctx, env); err != nil {
			return nil, err
		}
		eps := s.fe.Endpoints()
		s.urls[plan.ProtocolGRPC], s.urls[plan.ProtocolHTTP] = eps["grpc"], eps["rest"]
		metricsURL = "http://" + eps["rest"] + promPath
	}
	co, err := s.connOptions(env)
	if err != nil {
		return nil, err
	}
	for _, proto := range protocols(p) {
		var a api
		if proto == plan.ProtocolGRPC {
			a, err = newGRPC(s.urls[proto], co)
		} else {
			a, err = newREST(s.urls[proto], co)
		}
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s: %w", kinds.ServerField(srv), err))
		}
		s.apis[proto] = a
	}
	for _, m := range p.Models {
		ms := &modelState{model: m, ref: modelRef{Name: m.Name, Version: m.Version, Signature: set.SignatureName}}
		for _, proto := range protocols(p) {
			if err := s.reach(ctx, proto, ms.ref, env.ConnectTimeout); err != nil {
				return nil, err
			}
		}
		if err := s.readSignature(ctx, ms); err != nil {
			return nil, err
		}
		s.models[m.Alias] = ms
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	if metricsURL != "" {
		if err := s.openStats(ctx, metricsURL, co); err != nil {
			return nil, err
		}
	} else {
		s.notes = append(s.notes, "TF Serving has no statistics API: give metrics_url (its Prometheus endpoint, "+promPath+" on the REST port) for the server's own request counts and latency")
	}
	return s, nil
}

// startEmbedded serves the built-in models through this kind's flavour.
func (s *server) startEmbedded(ctx context.Context, env kinds.Env) error {
	core, err := embedded.Core(s.plan.Server(), env.Net)
	if err != nil {
		return err
	}
	s.core = core
	addrs := map[string]string{"grpc": "127.0.0.1:0", "rest": "127.0.0.1:0"}
	var listen embedded.Listen
	if env.Net != nil {
		host := "embedded-tfserving"
		if s.plan.Server().Name != "" {
			host += "-" + s.plan.Server().Name
		}
		addrs = map[string]string{"grpc": host + ":" + defaultGRPCPort, "rest": host + ":" + defaultRESTPort}
		listen = env.Net.Listen
	}
	fe, err := Kind{}.ServeFlavour(ctx, core, addrs, listen)
	if err != nil {
		return failure.Env(fmt.Errorf("starting the embedded TF Serving server: %w", err))
	}
	s.fe = fe
	return nil
}

func (s *server) connOptions(env kinds.Env) (connOptions, error) {
	srv := s.plan.Server()
	co := connOptions{Dial: env.Net.DialFunc(), Headers: srv.Headers, Timeout: srv.Timeout}
	if t := srv.TLS; t.Enabled {
		cfg, err := transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return co, failure.Invalid(fmt.Errorf("%s.tls: %w", kinds.ServerField(srv), err))
		}
		co.TLS = cfg
	}
	return co, nil
}

// protocols lists the protocols the plan's points use.
func protocols(p *plan.Plan) []plan.Protocol {
	var out []plan.Protocol
	for _, pt := range p.Points {
		if pt.Protocol != "" && !slices.Contains(out, pt.Protocol) {
			out = append(out, pt.Protocol)
		}
	}
	if len(out) == 0 {
		out = append(out, cmpProto(p.Server().Protocol))
	}
	slices.Sort(out)
	return out
}

func cmpProto(p plan.Protocol) plan.Protocol {
	if p == "" {
		return plan.ProtocolHTTP
	}
	return p
}

// mainAPI is the server protocol's API, or any.
func (s *server) mainAPI() api {
	if a := s.apis[cmpProto(s.plan.Server().Protocol)]; a != nil {
		return a
	}
	for _, proto := range []plan.Protocol{plan.ProtocolGRPC, plan.ProtocolHTTP} {
		if a := s.apis[proto]; a != nil {
			return a
		}
	}
	return nil
}

// readSignature reads the model's signatures and picks the scenario's.
func (s *server) readSignature(ctx context.Context, ms *modelState) error {
	sigs, err := s.mainAPI().signatures(ctx, ms.ref)
	if err != nil {
		if notFound(err) {
			return failure.Invalid(fmt.Errorf("%s (alias %s): metadata: %w", ms.ref.what(), ms.model.Alias, err))
		}
		// TF Serving's status API ignores version labels (it answers for
		// every version), so an unknown label shows first here, as an
		// INVALID_ARGUMENT: the scenario's mistake, not the server's.
		if ms.ref.isLabel() && invalidArgument(err) {
			return failure.Invalid(fmt.Errorf("%s (alias %s): the server has no version labelled %q (labels come from its model config's version_labels): %w",
				ms.ref.what(), ms.model.Alias, ms.ref.Version, err))
		}
		return failure.Env(fmt.Errorf("%s (alias %s): metadata: %w", ms.ref.what(), ms.model.Alias, err))
	}
	sig, err := pickSignature(ms.ref.Name, sigs, ms.ref.Signature)
	if err != nil {
		return failure.Invalid(fmt.Errorf("%s.signature_name: %w", kinds.OptionsField(s.plan.Server()), err))
	}
	ms.sig = sig
	ms.spec = sig.modelSpec(ms.ref.Name)
	return nil
}

// openStats checks metrics_url answers the Prometheus text format before
// any load: a wrong URL must not surface as missing figures afterwards.
func (s *server) openStats(ctx context.Context, url string, co connOptions) error {
	tr := &http.Transport{Proxy: nil, DialContext: co.Dial, TLSClientConfig: co.TLS}
	s.stats = &promStats{url: url, client: &http.Client{Transport: tr}}
	if _, err := s.stats.families(ctx); err != nil {
		tr.CloseIdleConnections()
		field := kinds.ServerField(s.plan.Server()) + ".metrics_url"
		if errors.Is(err, errNotProm) {
			return failure.Invalid(fmt.Errorf("%s: %w (TF Serving serves its metrics at %s on the REST port when --monitoring_config_file enables prometheus_config)", field, err, promPath))
		}
		if errors.Is(err, errNoMetricsPage) {
			// The server answered: it has no such page. Asking again will
			// not make one, so this is the scenario's (or the server's
			// configuration's) to fix, as a check needing figures a server
			// does not offer is.
			return failure.Invalid(fmt.Errorf("%s: %w: TF Serving answers 404 there unless it was started with --monitoring_config_file naming a file with prometheus_config { enable: true, path: %q }; start it so, or leave metrics_url out (the run then has no server figures)", field, err, promPath))
		}
		return failure.Env(fmt.Errorf("%s: %w", field, err))
	}
	where := url
	if s.fe != nil {
		where = "the embedded server's " + promPath
	}
	s.notes = append(s.notes, fmt.Sprintf("server figures are TF Serving's own, from %s and %s at %s: successful request count and mean request latency only (TF Serving counts no inferences or executions and reports no queue or compute breakdown)",
		metricRequests, metricLatency, where))
	return nil
}

func (s *server) Info() result.ServerInfo {
	srv := s.plan.Server()
	info := result.ServerInfo{Key: srv.Name, Name: serverName, Embedded: s.fe != nil}
	if s.fe != nil {
		info.Version = "embedded"
	} else {
		info.URL = srv.URLFor(cmpProto(srv.Protocol))
	}
	return info
}

func (s *server) Notes() []string { return s.notes }

func (s *server) Close() error {
	for _, a := range s.apis {
		a.close()
	}
	if s.stats != nil {
		s.stats.client.CloseIdleConnections()
	}
	if s.fe != nil {
		s.fe.Close()
	}
	if s.core != nil {
		s.core.Close()
	}
	return nil
}
