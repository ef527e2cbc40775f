package torchserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Name is the scenario's server.kind.
const Name = "torchserve"

// Kind is the TorchServe service kind.
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return Name }

// server is one TorchServe made ready for load.
type server struct {
	plan    *plan.Plan
	api     *api
	load    *http.Transport // the callers' connections
	core    *refserver.Server
	fe      embedded.Frontend
	version string
	notes   []string
	models  map[string]*prepared // by alias
}

// prepared is a model's requests, read and checked once for every point.
type prepared struct {
	model    plan.Model
	data     *inputdata.Data
	reqs     []request
	checkers []*checker    // by request; nil where nothing is expected
	url      string        // POST target
	headers  []http.Header // by request: Content-Type and the server's headers
	label    string        // model_version label of its metrics series
}

// Open starts the embedded flavour or reaches the server, waits for its
// inference API, checks every model with the management API (registered,
// with workers), reaches the metrics API, and reads every model's input
// data, all before any load.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	if err := checkPlan(p); err != nil {
		return nil, err
	}
	srv := p.Server()
	s := &server{plan: p, models: map[string]*prepared{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	inference := srv.URLFor(plan.ProtocolHTTP)
	if srv.Embedded {
		if len(srv.Options) > 0 {
			return nil, failure.Invalid(fmt.Errorf("%s: management_url and metrics_url do not apply with embedded: true (the embedded server serves all three APIs itself)", kinds.OptionsField(srv)))
		}
		if s.core, err = embedded.Core(srv, env.Net); err != nil {
			return nil, err
		}
		var listen embedded.Listen
		if env.Net != nil {
			listen = env.Net.Listen
		}
		if s.fe, err = (Kind{}).ServeFlavour(ctx, s.core, embeddedAddrs(srv, env.Net != nil), listen); err != nil {
			return nil, failure.Env(fmt.Errorf("starting the embedded torchserve server: %w", err))
		}
		inference = s.fe.Endpoints()[EndpointInference]
	}
	ep, err := resolveEndpoints(srv, inference)
	if err != nil {
		return nil, err
	}
	if s.fe != nil {
		eps := s.fe.Endpoints()
		ep.management, ep.metrics = "http://"+eps[EndpointManagement], "http://"+eps[EndpointMetrics]
	}
	header := http.Header{}
	for k, v := range srv.Headers {
		header.Set(k, v)
	}
	var tlsCfg *tls.Config
	if t := srv.TLS; t.Enabled {
		cfg, err := transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s.tls: %w", kinds.ServerField(srv), err))
		}
		tlsCfg = cfg
	}
	dial := env.Net.DialFunc()
	s.api = &api{hc: &http.Client{Transport: newTransport(tlsCfg, dial, 8), Timeout: 30 * time.Second}, ep: ep, header: header}
	s.load = newTransport(tlsCfg, dial, 1024)
	if err := s.waitPing(ctx, env.ConnectTimeout); err != nil {
		return nil, err
	}
	if ep.management != "" {
		for _, m := range p.Models {
			if err := s.checkModel(ctx, m, env.ConnectTimeout); err != nil {
				return nil, err
			}
		}
	} else {
		s.notes = append(s.notes, "management API off (management_url: none): models and workers were not checked before the load")
	}
	if err := s.checkMetrics(ctx); err != nil {
		return nil, err
	}
	s.version = s.api.serverVersion(ctx)
	for _, m := range p.Models {
		pm, err := prepare(m, ep.inference, header)
		if err != nil {
			return nil, err
		}
		s.models[m.Alias] = pm
	}
	return s, nil
}

// checkPlan refuses what the kind cannot send, before anything is
// contacted: TorchServe's REST API takes one body per request and batches
// on the server.
func checkPlan(p *plan.Plan) error {
	var errs []string
	for _, m := range p.Models {
		switch {
		case m.Sequence:
			errs = append(errs, fmt.Sprintf("model %s: sequence: true: TorchServe's stateful sessions are not measured by this kind", m.Alias))
		case m.Input.Kind == inputdata.KindRandom || m.Input.Kind == inputdata.KindZero || m.Input.Kind == "":
			errs = append(errs, fmt.Sprintf("model %s: input_data: TorchServe has no model metadata to generate %s inputs from; give a JSON input-data file (request bodies) or a directory of request body files", m.Alias, orRandom(m.Input.Kind)))
		}
	}
	seen := map[string]bool{}
	for _, pt := range p.Points {
		var why []string
		if pt.Protocol == plan.ProtocolGRPC {
			why = append(why, "protocol grpc: this kind speaks TorchServe's REST inference API (protocol: http)")
		}
		if pt.SharedMemory != "" && pt.SharedMemory != plan.ShmNone {
			why = append(why, fmt.Sprintf("shared_memory %s: TorchServe has no shared-memory inputs", pt.SharedMemory))
		}
		if pt.BatchSize > 1 {
			why = append(why, fmt.Sprintf("batch_size %d: one request carries one body; TorchServe batches requests on the server (its model's batch_size)", pt.BatchSize))
		}
		if len(pt.Shapes) > 0 {
			why = append(why, "shapes: request bodies come whole from the input data")
		}
		if pt.Load.Streaming {
			why = append(why, "streaming: TorchServe's REST API answers each request once")
		}
		for _, w := range why {
			if !seen[w] {
				seen[w] = true
				errs = append(errs, fmt.Sprintf("model %s: %s", pt.Model, w))
			}
		}
	}
	if len(errs) > 0 {
		return failure.Invalid(fmt.Errorf("kind torchserve: %s", strings.Join(errs, "; ")))
	}
	return nil
}

func orRandom(k string) string {
	if k == "" {
		return inputdata.KindRandom
	}
	return k
}

// waitPing waits for GET /ping to say Healthy. An answer that is not
// TorchServe's stops at once: the URL is another API's (exit 2).
func (s *server) waitPing(ctx context.Context, timeout time.Duration) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wrong error
	base := s.api.ep.inference
	err := kinds.WaitReady(cctx, func(c context.Context) (bool, error) {
		r, err := s.api.ping(c)
		if err != nil {
			if w := wrongTransport(base, err); w != nil {
				wrong = w
				cancel()
			}
			return false, err
		}
		ok, isPing := healthy(r)
		switch {
		case ok:
			return true, nil
		case isPing, r.status == http.StatusServiceUnavailable:
			return false, fmt.Errorf("GET /ping answered %d: %s", r.status, strings.Join(strings.Fields(string(r.body)), " "))
		}
		wrong = s.api.identify(c, r)
		cancel()
		return false, wrong
	}, fmt.Sprintf("TorchServe inference API at %s", base), timeout)
	if wrong != nil {
		return wrong
	}
	return err
}

// checkModel asks the management API for the model (and version): it
// must be registered (else exit 2) and have a worker. A model registered
// with no workers cannot answer at all, which is the scenario's model
// the server does not serve (exit 2); workers that exist but do not come
// READY within the connect timeout are the server failing (exit 3).
func (s *server) checkModel(ctx context.Context, m plan.Model, timeout time.Duration) error {
	what := fmt.Sprintf("model %q", m.Name)
	if m.Version != "" {
		what = fmt.Sprintf("model %q version %q", m.Name, m.Version)
	}
	mgmt := s.api.ep.management
	descs, err := s.api.describe(ctx, m.Name, m.Version)
	var nr *notRegistered
	if errors.As(err, &nr) {
		if m.Version != "" {
			if _, err2 := s.api.describe(ctx, m.Name, ""); err2 == nil {
				return failure.Invalid(fmt.Errorf("%s (alias %s): TorchServe at %s has model %q but not this version (%s)", what, m.Alias, mgmt, m.Name, nr.msg))
			}
		}
		names, lerr := s.api.models(ctx)
		list := "could not list them: " + fmt.Sprint(lerr)
		if lerr == nil {
			slices.Sort(names)
			list = "registered: " + strings.Join(names, ", ")
			if len(names) == 0 {
				list = "none registered"
			}
		}
		return failure.Invalid(fmt.Errorf("%s (alias %s) is not registered at TorchServe %s (%s)", what, m.Alias, mgmt, list))
	}
	if err != nil {
		return s.managementFailed(err)
	}
	d := descs[0]
	ready, statuses := d.readyWorkers()
	if ready > 0 {
		return nil
	}
	if len(d.Workers) == 0 && d.MinWorkers == 0 {
		return failure.Invalid(fmt.Errorf("%s (alias %s) has no workers at TorchServe %s (minWorkers 0): every prediction would be refused; scale it first, e.g. curl -X PUT '%s/models/%s?min_worker=1&synchronous=true'",
			what, m.Alias, mgmt, mgmt, m.Name))
	}
	// Workers are starting (or restarting): wait for one.
	var last []string
	err = kinds.WaitReady(ctx, func(c context.Context) (bool, error) {
		descs, err := s.api.describe(c, m.Name, m.Version)
		if err != nil {
			return false, err
		}
		var n int
		n, last = descs[0].readyWorkers()
		return n > 0, nil
	}, fmt.Sprintf("a READY worker of %s at %s", what, mgmt), timeout)
	if err != nil {
		if last == nil {
			last = statuses
		}
		return failure.Env(fmt.Errorf("%s (alias %s): no worker became READY (workers: %s; minWorkers %d): %w",
			what, m.Alias, orNone(last), d.MinWorkers, err))
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func (s *server) managementFailed(err error) error {
	hint := "set server.torchserve.management_url, or management_url: none to skip the model checks"
	if s.api.ep.managementSet {
		hint = "check server.torchserve.management_url"
	}
	return failure.Env(fmt.Errorf("TorchServe management API at %s: %w (%s)", s.api.ep.management, err, hint))
}

// checkMetrics reads the metrics API once. Given explicitly, it must
// answer (else exit 3); derived from the inference URL, a failure only
// turns the server's figures off, with a note.
func (s *server) checkMetrics(ctx context.Context) error {
	if s.api.ep.metrics == "" {
		s.notes = append(s.notes, "metrics API off (metrics_url: none): no server-side figures")
		return nil
	}
	_, err := s.api.scrape(ctx)
	if err == nil {
		return nil
	}
	if s.api.ep.metricsSet {
		return failure.Env(fmt.Errorf("TorchServe metrics API at %s: %w (check server.torchserve.metrics_url, or metrics_url: none)", s.api.ep.metrics, err))
	}
	s.notes = append(s.notes, fmt.Sprintf("TorchServe metrics API not reachable at %s (%v): no server-side figures; set server.torchserve.metrics_url", s.api.ep.metrics, err))
	s.api.ep.metrics = ""
	return nil
}

func (s *server) Info() result.ServerInfo {
	info := result.ServerInfo{Key: s.plan.Server().Name, Name: "torchserve", Version: s.version, Embedded: s.fe != nil}
	if s.fe == nil {
		info.URL = s.api.ep.inference
	}
	if s.api.ep.management != "" {
		info.Extensions = append(info.Extensions, "management")
	}
	if s.api.ep.metrics != "" {
		info.Extensions = append(info.Extensions, "metrics")
	}
	return info
}

func (s *server) Notes() []string { return s.notes }

func (s *server) Close() error {
	if s.api != nil {
		s.api.hc.CloseIdleConnections()
	}
	if s.load != nil {
		s.load.CloseIdleConnections()
	}
	if s.fe != nil {
		s.fe.Close()
	}
	if s.core != nil {
		s.core.Close()
	}
	return nil
}

// embeddedAddrs are the flavour's listen addresses for an embedded
// server: ephemeral loopback ports, or names of their own on an
// in-memory network.
func embeddedAddrs(srv plan.Server, mem bool) map[string]string {
	if !mem {
		return map[string]string{EndpointInference: "127.0.0.1:0", EndpointManagement: "127.0.0.1:0", EndpointMetrics: "127.0.0.1:0"}
	}
	host := "torchserve-embedded"
	if srv.Name != "" {
		host += "-" + srv.Name
	}
	return map[string]string{EndpointInference: host + ":" + defaultInferencePort,
		EndpointManagement: host + ":" + defaultManagementPort, EndpointMetrics: host + ":" + defaultMetricsPort}
}
