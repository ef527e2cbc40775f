package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/embedded"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Name is the scenario's server.kind of this kind.
const Name = "grpc"

// Kind is any gRPC service: a method described by .proto files compiled
// at run time, a protoset or the server's reflection, called with
// messages written as JSON (or perf_analyzer's framed binary messages).
type Kind struct{}

// Name is the scenario's server.kind.
func (Kind) Name() string { return Name }

// Open checks the scenario against the service before any load: the
// descriptors compile (or the server describes them), every method
// exists, every input message fits its type; then it reaches the server
// (or starts the embedded demo service) and makes sure the server serves
// each method.
func (Kind) Open(ctx context.Context, p *plan.Plan, env kinds.Env) (_ kinds.Server, err error) {
	cfg, err := loadConfig(p)
	if err != nil {
		return nil, err
	}
	if err := checkPlan(p); err != nil {
		return nil, err
	}
	if len(p.Models) == 0 {
		return nil, failure.Invalid(fmt.Errorf("%s: no model calls this server", kinds.ServerField(p.Server())))
	}
	s := &server{plan: p, cfg: cfg, models: map[string]*model{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// Descriptors from files first: a .proto that does not compile or an
	// input that does not fit is known without any server.
	var files *protoregistry.Files
	var where string
	switch {
	case len(cfg.protoPaths) > 0:
		files, err = compileProtos(ctx, cfg)
		where = "the .proto files"
	case cfg.protoset != "":
		files, err = loadProtoset(cfg)
		where = "the protoset " + cfg.protoset
	}
	if err != nil {
		return nil, failure.Invalid(err)
	}
	if files != nil {
		if err := s.prepare(files, where); err != nil {
			return nil, err
		}
	}

	srv := p.Server()
	addr := srv.URLFor(plan.ProtocolGRPC)
	var tlsCfg *tls.Config
	if srv.Embedded {
		core, err := embedded.Core(srv, env.Net)
		if err != nil {
			return nil, err
		}
		s.core = core
		listenAt := "127.0.0.1:0"
		var listen embedded.Listen
		if env.Net != nil {
			listenAt, listen = "embedded-grpc"+suffix(srv.Name)+":50051", env.Net.Listen
		}
		fe, err := Kind{}.ServeFlavour(ctx, core, map[string]string{"grpc": listenAt}, listen)
		if err != nil {
			return nil, err
		}
		s.front = fe
		addr = fe.Endpoints()["grpc"]
	} else {
		if addr, err = target(addr); err != nil {
			return nil, failure.Invalid(fmt.Errorf("%s.url: %w", kinds.ServerField(srv), err))
		}
		if t := srv.TLS; t.Enabled {
			if tlsCfg, err = transport.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure); err != nil {
				return nil, failure.Invalid(fmt.Errorf("%s.tls: %w", kinds.ServerField(srv), err))
			}
		}
	}
	s.addr = addr
	s.md = outgoing(srv.Headers, cfg.metadata)
	s.pool = &pool{addr: addr, tls: tlsCfg, dial: env.Net.DialFunc(), maxRecv: cfg.maxRecv}
	conn, err := s.pool.get(0)
	if err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: %w", kinds.ServerField(srv), err))
	}
	octx := metadata.NewOutgoingContext(ctx, s.md)

	// Ready: the server answers a call of the first method as a gRPC
	// server (with any status but UNAVAILABLE).
	first := cfg.methods[p.Models[0].Alias]
	var answered error
	var wrong string
	ready := func(ctx context.Context) (bool, error) {
		err := probe(ctx, conn, first.path())
		switch code := status.Code(err); {
		case err == nil:
		case code == codes.Unavailable:
			if wrong = wrongProtocol(err); wrong == "" {
				return false, err
			}
		case code == codes.DeadlineExceeded || code == codes.Canceled:
			return false, err
		}
		answered = err
		return true, nil
	}
	if err := kinds.WaitReady(octx, ready, s.what(), env.ConnectTimeout); err != nil {
		return nil, err
	}
	if wrong != "" {
		return nil, failure.Invalid(fmt.Errorf("%s answers, but not as a gRPC server: %s; is %s the service's gRPC port?", s.what(), wrong, addr))
	}

	if cfg.reflection {
		var services []string
		for _, m := range cfg.methods {
			if !slices.Contains(services, m.service) {
				services = append(services, m.service)
			}
		}
		slices.Sort(services)
		files, err := reflect(octx, conn, services)
		var notServed *serviceNotServed
		switch {
		case errors.As(err, &notServed):
			return nil, failure.Invalid(fmt.Errorf("%s.method: %s %w", cfg.field, s.what(), err))
		case errors.Is(err, errNoReflection):
			return nil, failure.Invalid(fmt.Errorf("%s.reflection: %s: %w; describe the service with proto_files or a protoset", cfg.field, s.what(), err))
		case err != nil:
			return nil, failure.Env(fmt.Errorf("%s: %w", s.what(), err))
		}
		if err := s.prepare(files, "the server's reflection"); err != nil {
			return nil, err
		}
	}
	// Every method must be served: a server answers UNIMPLEMENTED for a
	// service or method it lacks before it reads any message.
	probed := map[string]error{first.path(): answered}
	for _, alias := range sortedKeys(cfg.methods) {
		m := cfg.methods[alias]
		res, done := probed[m.path()]
		if !done {
			res = probe(octx, conn, m.path())
			probed[m.path()] = res
		}
		if err := s.judgeProbe(octx, conn, m, res); err != nil {
			return nil, err
		}
	}
	// A method the server declares but does not implement (grpc-go's
	// Unimplemented stubs) reads the message before it says so: the first
	// call of each model's data, sent once, tells.
	for _, m := range p.Models {
		if err := s.firstCall(ctx, s.models[m.Alias]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// firstCall sends a model's first call once before the load and refuses
// a method the server answers UNIMPLEMENTED; any other outcome is left to
// the load to count.
func (s *server) firstCall(ctx context.Context, m *model) error {
	pt := &point{srv: s, m: m}
	c, err := pt.NewCaller(ctx, 0)
	if err != nil {
		return failure.Env(err)
	}
	defer c.Close()
	start := time.Now()
	step := &m.data.Streams[0][0]
	var out kinds.Outcome
	c.Call(ctx, func() time.Duration { return time.Since(start) }, &kinds.Request{Step: inputdata.Request{Step: step}}, &out)
	var se *transport.ServerError
	if errors.As(out.Err, &se) && se.GRPCCode == codes.Unimplemented {
		return failure.Invalid(fmt.Errorf("%s: %s does not implement %s: its first call (%s) was answered UNIMPLEMENTED: %s",
			s.cfg.methodField[m.alias], s.what(), m.method, step.Origin, se.Message))
	}
	return nil
}

func suffix(name string) string {
	if name == "" {
		return ""
	}
	return "-" + name
}

// Check does what Open does before it reaches for the server: the kind
// block, what the plan asks of the kind, and, when the descriptors come
// from files, their compilation and each model's method and input data
// against them; so perfscen validate refuses what run would, at the
// key's line.
func (Kind) Check(p *plan.Plan) error {
	cfg, err := loadConfig(p)
	if err != nil {
		return err
	}
	if err := checkPlan(p); err != nil {
		return err
	}
	var files *protoregistry.Files
	var where string
	switch {
	case len(cfg.protoPaths) > 0:
		files, err = compileProtos(context.Background(), cfg)
		where = "the .proto files"
	case cfg.protoset != "":
		files, err = loadProtoset(cfg)
		where = "the protoset " + cfg.protoset
	}
	if err != nil {
		return failure.Invalid(err)
	}
	if files == nil {
		return nil
	}
	return (&server{plan: p, cfg: cfg, models: map[string]*model{}}).prepare(files, where)
}

// checkPlan refuses what kind grpc has no meaning for.
func checkPlan(p *plan.Plan) error {
	srv := kinds.ServerField(p.Server())
	if p.Server().EmbeddedFlavor != "" {
		return failure.Invalid(fmt.Errorf("%s.embedded_flavor: kind grpc has one embedded service, the demo", srv))
	}
	for _, m := range p.Models {
		switch {
		case m.Sequence:
			return failure.Invalid(fmt.Errorf("model %s: sequence applies only to kind kserve", m.Alias))
		case m.Version != "":
			return failure.Invalid(fmt.Errorf("model %s: version applies to model servers; kind grpc calls a method", m.Alias))
		}
	}
	for _, pt := range p.Points {
		switch {
		case pt.BatchSize > 1:
			return failure.Invalid(fmt.Errorf("point %s: batch size %d: kind grpc sends the messages of the input data as they are (batch_size applies only to kind kserve)", pt.ID, pt.BatchSize))
		case pt.SharedMemory != "" && pt.SharedMemory != plan.ShmNone:
			return failure.Invalid(fmt.Errorf("point %s: shared memory applies only to kind kserve", pt.ID))
		case len(pt.Shapes) > 0:
			return failure.Invalid(fmt.Errorf("point %s: shapes apply only to kind kserve", pt.ID))
		case pt.Load.Streaming:
			return failure.Invalid(fmt.Errorf("point %s: load.streaming applies only to kind kserve; a streaming method streams by itself", pt.ID))
		}
	}
	if uses := serverMetricUses(p.Checks); len(uses) > 0 {
		return failure.Invalid(fmt.Errorf("kind grpc measures at the client only, with no server-side figures: %s", strings.Join(uses, "; ")))
	}
	return nil
}

// serverMetricUses lists the checks that read a server_* figure.
func serverMetricUses(c plan.Checks) []string {
	var out []string
	for _, t := range c.Thresholds {
		if strings.HasPrefix(t.Metric, "server_") {
			out = append(out, fmt.Sprintf("threshold %q", t.Text))
		}
	}
	for _, cmp := range c.Comparisons {
		if strings.HasPrefix(cmp.Metric, "server_") {
			out = append(out, fmt.Sprintf("comparison %q", cmp.Name))
		}
	}
	if b := c.Baseline; b != nil {
		for _, m := range b.Metrics {
			if strings.HasPrefix(m, "server_") {
				out = append(out, "baseline metric "+m)
			}
		}
	}
	return out
}

// server is one gRPC service made ready for load.
type server struct {
	plan   *plan.Plan
	cfg    *config
	addr   string
	md     metadata.MD
	pool   *pool
	core   *refserver.Server
	front  embedded.Frontend
	models map[string]*model // by alias
}

// model is one model's method and requests.
type model struct {
	alias   string
	method  methodName
	md      protoreflect.MethodDescriptor
	data    *inputdata.Data
	expects []*expectation // by flat step index
	tol     float64
}

func (s *server) what() string {
	if s.front != nil {
		return "the embedded grpc demo service"
	}
	return "grpc server at " + s.addr
}

// prepare finds every model's method in files and turns its input data
// into serialised calls.
func (s *server) prepare(files *protoregistry.Files, where string) error {
	types := dynamicpb.NewTypes(files)
	for _, m := range s.plan.Models {
		name := s.cfg.methods[m.Alias]
		md, err := findMethod(files, name, where)
		if err != nil {
			return failure.Invalid(fmt.Errorf("%s (model %s): %w", s.cfg.methodField[m.Alias], m.Alias, err))
		}
		reqs, err := readInputs(m.Input, md, types)
		if err != nil {
			return failure.Invalid(fmt.Errorf("model %s (%s): %w", m.Alias, name, err))
		}
		mo := &model{alias: m.Alias, method: name, md: md, tol: m.FloatTolerance}
		steps := make([]inputdata.Step, len(reqs))
		mo.expects = make([]*expectation, len(reqs))
		for i, r := range reqs {
			st := inputdata.Step{Origin: r.origin, Inputs: make([]tensor.Tensor, len(r.msgs))}
			for j, b := range r.msgs {
				st.Inputs[j] = tensor.Tensor{Name: "message", DataType: tensor.BYTES, Shape: []int64{1}, Raw: b}
			}
			if r.expect != nil && m.Validate {
				// The engine checks replies of steps with expected
				// outputs; the expectation itself stays here.
				st.Expected = []tensor.Tensor{{Name: "reply", DataType: tensor.BYTES, Shape: []int64{1}}}
				mo.expects[i] = r.expect
			}
			steps[i] = st
		}
		mo.data = &inputdata.Data{Streams: [][]inputdata.Step{steps}, BatchSize: 1}
		s.models[m.Alias] = mo
	}
	return s.checkReplies()
}

// checkReplies refuses server.grpc.replies where no method streams its
// replies: a unary or client-streaming call ends with its one reply, and
// the setting would be silently ignored.
func (s *server) checkReplies() error {
	if s.cfg.replies == 0 {
		return nil
	}
	var single []string
	for _, m := range s.plan.Models {
		mo := s.models[m.Alias]
		if mo.md.IsStreamingServer() {
			return nil
		}
		if note := mo.method.String() + shapeNote(mo.md); !slices.Contains(single, note) {
			single = append(single, note)
		}
	}
	for i, n := range single {
		if !strings.Contains(n, "(") {
			single[i] = n + " (unary)"
		}
	}
	return failure.Invalid(fmt.Errorf("%s.replies: applies to server- or bidi-streaming methods, and %s answers with one reply (leave replies out)",
		s.cfg.field, strings.Join(single, ", ")))
}

// judgeProbe turns the answer to a method's probe into a verdict: a
// method the server lacks is the scenario's fault, named with what the
// server offers where its reflection says.
func (s *server) judgeProbe(ctx context.Context, conn grpcConn, m methodName, res error) error {
	switch status.Code(res) {
	case codes.Unimplemented:
		msg := fmt.Sprintf("%s does not serve %s: %s", s.what(), m, status.Convert(res).Message())
		if served := servedServices(ctx, conn); len(served) > 0 {
			msg += fmt.Sprintf(" (its reflection lists: %s)", strings.Join(served, ", "))
		} else {
			msg += " (is this the service's port?)"
		}
		return failure.Invalid(fmt.Errorf("%s: %s", s.cfg.field, msg))
	case codes.Unauthenticated, codes.PermissionDenied:
		return failure.Invalid(fmt.Errorf("%s refused a call of %s: %s (server.headers or %s.metadata carry credentials)",
			s.what(), m, status.Convert(res).Message(), s.cfg.field))
	}
	return nil
}

func (s *server) Info() result.ServerInfo {
	info := result.ServerInfo{Key: s.plan.Server().Name, Name: "grpc"}
	if s.front != nil {
		info.Name, info.Version, info.Embedded = "perfscen-grpc-demo", "embedded", true
	} else {
		info.URL = s.addr
	}
	return info
}

func (s *server) Notes() []string { return nil }

func (s *server) Close() error {
	if s.pool != nil {
		s.pool.close()
	}
	if s.front != nil {
		s.front.Close()
	}
	if s.core != nil {
		s.core.Close()
	}
	return nil
}

// Point hands out the model's prepared calls.
func (s *server) Point(_ context.Context, pt *plan.Point) (kinds.Point, error) {
	m, ok := s.models[pt.Model]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("no calls prepared for point %s", pt.ID))
	}
	return &point{srv: s, m: m}, nil
}
