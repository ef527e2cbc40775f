package grpc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/grpc/demopb"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// testPlan is a plan of one grpc server and a point per model, with the
// scenario file in dir.
func testPlan(dir string, srv plan.Server, opts map[string]any, models ...plan.Model) *plan.Plan {
	srv.Kind, srv.Options, srv.Protocol = Name, opts, plan.ProtocolGRPC
	if srv.Timeout == 0 {
		srv.Timeout = 5 * time.Second
	}
	p := &plan.Plan{Scenario: "t", ScenarioPath: filepath.Join(dir, "scenario.yaml"), Servers: []plan.Server{srv}, Models: models}
	for _, m := range models {
		p.Points = append(p.Points, plan.Point{ID: m.Alias + "/c=1", Model: m.Alias, Protocol: plan.ProtocolGRPC,
			SharedMemory: plan.ShmNone, BatchSize: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}})
	}
	return p
}

// jsonModel is a model whose input data is the JSON src, written to dir.
func jsonModel(t *testing.T, dir, alias, src string) plan.Model {
	t.Helper()
	path := filepath.Join(dir, alias+".json")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return plan.Model{Alias: alias, Name: "delay", Validate: true, Input: plan.Input{Kind: "json", Paths: []string{path}}}
}

// call sends step i of alias's point once.
func call(t *testing.T, s kinds.Server, p *plan.Plan, alias string, i int, check bool) kinds.Outcome {
	t.Helper()
	ctx := context.Background()
	var pt *plan.Point
	for j := range p.Points {
		if p.Points[j].Model == alias {
			pt = &p.Points[j]
		}
	}
	kp, err := s.Point(ctx, pt)
	if err != nil {
		t.Fatal(err)
	}
	defer kp.Close()
	c, err := kp.NewCaller(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	req := &kinds.Request{Step: inputdata.Request{Step: &kp.Data().Streams[0][i], Index: i}, Index: i, Check: check}
	var out kinds.Outcome
	c.Call(ctx, func() time.Duration { return time.Since(start) }, req, &out)
	return out
}

func TestEmbeddedDemoCalls(t *testing.T) {
	dir := t.TempDir()
	var mem memnet.Network
	p := testPlan(dir, plan.Server{Embedded: true},
		map[string]any{"method": "perfscen.demo.v1.Demo/Predict", "methods": map[string]any{
			"generate": "perfscen.demo.v1.Demo/Generate", "session": "perfscen.demo.v1.Demo/Session", "add": "/perfscen.demo.v1.Demo/Add"}},
		jsonModel(t, dir, "predict", `{"data": [
			{"message": {"model": "identity_fp32", "values": [1, 2.5]}, "expected": {"model": "identity_fp32", "values": [1, 2.5]}},
			{"message": {"model": "identity_fp32", "values": [1]}, "expected_fields": {"values[0]": 2}}]}`),
		jsonModel(t, dir, "generate", `{"data": [{"message": {"request": {"model": "identity_fp32", "values": [3]}, "count": 3},
			"expected": [{"model": "identity_fp32", "values": [3]}, {"model": "identity_fp32", "values": [3], "index": 1}, {"model": "identity_fp32", "values": [3], "index": 2}]}]}`),
		jsonModel(t, dir, "session", `{"data": [{"messages": [{"model": "identity_fp32", "values": [1]}, {"model": "identity_fp32", "values": [2]}],
			"expected_fields": {"[1].values": [2], "model": "identity_fp32"}}]}`),
		jsonModel(t, dir, "add", `{"data": [{"message": {"a": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], "b": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},
			"expected_fields": {"sum[15]": 17, "difference[0]": 0}}]}`),
	)
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{Net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if info := s.Info(); !info.Embedded || info.URL != "" || info.Version != "embedded" {
		t.Errorf("info %+v", info)
	}

	out := call(t, s, p, "predict", 0, true)
	if out.Err != nil || !out.Checked || out.Mismatch != "" || out.Decoupled || out.Responses != 0 || out.Done < out.Sent {
		t.Errorf("unary: %+v", out)
	}
	out = call(t, s, p, "predict", 1, true)
	if out.Err != nil || !strings.Contains(out.Mismatch, "predict.json:3 data[1]: values[0]: want 2, got 1") {
		t.Errorf("unary mismatch: %+v", out)
	}
	out = call(t, s, p, "generate", 0, true)
	if out.Err != nil || out.Mismatch != "" || !out.Decoupled || out.Responses != 3 || out.First <= out.Sent || out.First > out.Done {
		t.Errorf("server streaming: %+v", out)
	}
	out = call(t, s, p, "session", 0, true)
	if out.Err != nil || out.Mismatch != "" || !out.Decoupled || out.Responses != 2 {
		t.Errorf("bidi streaming: %+v", out)
	}
	out = call(t, s, p, "add", 0, true)
	if out.Err != nil || out.Mismatch != "" {
		t.Errorf("add: %+v", out)
	}
	if out := call(t, s, p, "predict", 1, false); out.Checked {
		t.Errorf("checked without being asked: %+v", out)
	}
}

// Failures are data, counted by message: the message carries the status
// code, so the summary counts them per code.
//
// It runs on synctest's fake clock: the 50 ms deadline is what the hung
// model must outlast, and a loaded machine must not make the others
// outlast it too.
func TestFailuresCarryTheirCode(t *testing.T) {
	synctest.Test(t, testFailuresCarryTheirCode)
}

func testFailuresCarryTheirCode(t *testing.T) {
	dir := t.TempDir()
	var mem memnet.Network
	p := testPlan(dir, plan.Server{Embedded: true, EmbeddedModels: map[string]map[string]string{
		"identity_fp32": {"error_rate": "1"}, "delay": {"hang": "true"}}},
		map[string]any{"method": "perfscen.demo.v1.Demo/Predict", "deadline": "50ms"},
		jsonModel(t, dir, "m", `{"data": [{"message": {"model": "identity_fp32"}}, {"message": {"model": "nope"}}, {"message": {"model": "delay"}}, {"message": {"model": "simple"}}]}`))
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{Net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := []struct {
		step        int
		code        codes.Code
		unreachable bool
		text        string
	}{
		{0, codes.Internal, false, "grpc /perfscen.demo.v1.Demo/Predict: server returned Internal:"},
		{1, codes.NotFound, false, "server returned NotFound: no model \"nope\""},
		// A deadline exceeded is the call's status: a failed request, not
		// an unreachable server (workers backed off and the run ended
		// "server unreachable" before).
		{2, codes.DeadlineExceeded, false, "grpc /perfscen.demo.v1.Demo/Predict: server returned DeadlineExceeded: deadline exceeded:"},
		{3, codes.InvalidArgument, false, "server returned InvalidArgument"},
	}
	for _, tc := range cases {
		out := call(t, s, p, "m", tc.step, false)
		if out.Err == nil || !strings.Contains(out.Err.Error(), tc.text) {
			t.Errorf("step %d: %v, want %q", tc.step, out.Err, tc.text)
			continue
		}
		if got := errors.Is(out.Err, transport.ErrUnavailable); got != tc.unreachable {
			t.Errorf("step %d: unreachable %v", tc.step, got)
		}
		var se *transport.ServerError
		if !tc.unreachable && (!errors.As(out.Err, &se) || se.GRPCCode != tc.code) {
			t.Errorf("step %d: %#v, want code %s", tc.step, out.Err, tc.code)
		}
	}
}

// serveDemo serves the demo service on loopback TCP with reflection, or
// without it when bare.
func serveDemo(t *testing.T, bare bool, opts ...grpc.ServerOption) string {
	t.Helper()
	return serveDemoAs(t, bare, false, opts...)
}

// serveDemoAs serves the demo service, or with unimplemented its
// generated stubs alone (each method answers UNIMPLEMENTED once it has
// read its request), with reflection.
func serveDemoAs(t *testing.T, bare, unimplemented bool, opts ...grpc.ServerOption) string {
	t.Helper()
	core, err := refserver.New(refserver.Options{HTTPAddr: "-", GRPCAddr: "-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	if !bare && !unimplemented && len(opts) == 0 {
		fe, err := Kind{}.ServeFlavour(context.Background(), core, map[string]string{"grpc": "127.0.0.1:0"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fe.Close() })
		return fe.Endpoints()["grpc"]
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	var impl demopb.DemoServer = &demo{core: core}
	if unimplemented {
		impl = demopb.UnimplementedDemoServer{}
	}
	demopb.RegisterDemoServer(srv, impl)
	if unimplemented {
		reflection.Register(srv)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return ln.Addr().String()
}

// copyDemoProto lays the demo's .proto out under dir/protos, as a
// scenario's own folder would hold it.
func copyDemoProto(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("demopb/perfscen/demo/v1/demo.proto")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "protos", "perfscen/demo/v1/demo.proto")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The kind block's paths are relative to the scenario file, not to the
// working directory.
func TestProtoPathsRelativeToScenario(t *testing.T) {
	addr := serveDemo(t, true)
	dir := t.TempDir()
	copyDemoProto(t, dir)
	for _, opts := range []map[string]any{
		{"proto_files": []any{"protos/perfscen/demo/v1/demo.proto"}, "import_paths": []any{"protos"}},
		{"proto_files": []any{"perfscen/demo/v1/demo.proto"}, "import_paths": []any{"protos"}},
	} {
		opts["method"] = "perfscen.demo.v1.Demo/Predict"
		p := testPlan(dir, plan.Server{URL: addr}, opts,
			jsonModel(t, dir, "predict", `{"data": [{"message": {"model": "identity_fp32", "values": [4]}, "expected_fields": {"values": [4]}}]}`))
		s, err := Kind{}.Open(context.Background(), p, kinds.Env{})
		if err != nil {
			t.Fatalf("%v: %v", opts["proto_files"], err)
		}
		out := call(t, s, p, "predict", 0, true)
		s.Close()
		if out.Err != nil || out.Mismatch != "" || !out.Checked {
			t.Errorf("%v: %+v", opts["proto_files"], out)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	demoAddr := serveDemo(t, false)
	bareAddr := serveDemo(t, true)
	stubAddr := serveDemoAs(t, false, true)
	http1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer http1.Close()
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	// The scenario lives in a temporary folder: paths to this package's
	// testdata must be absolute.
	protos, err := filepath.Abs(protoDir)
	if err != nil {
		t.Fatal(err)
	}
	places := []any{filepath.Join(protos, "service/places/v1/places.proto")}
	placesPaths := []any{filepath.Join(protos, "vendor"), filepath.Join(protos, "service")}
	good := `{"data": [{"message": {"model": "delay", "values": [1]}}]}`
	cases := []struct {
		name  string
		url   string
		opts  map[string]any
		input string
		edit  func(*plan.Plan)
		kind  failure.Kind
		wants []string
	}{
		{name: "method missing from the .proto files, no server needed", url: closed,
			opts:  map[string]any{"method": "places.v1.Places/Farthest", "proto_files": places, "import_paths": placesPaths},
			input: `{"data": [{"message": {}}]}`, kind: failure.InvalidInput,
			wants: []string{"server.grpc.method (model m)", "has no method Farthest (methods: Nearest, Within (server streaming), Visit (client streaming))"}},
		{name: "a .proto that does not compile", url: closed,
			opts:  map[string]any{"method": "bad.X/Y", "proto_files": []any{filepath.Join(protos, "bad/bad.proto")}, "import_paths": []any{filepath.Join(protos, "bad")}},
			input: good, kind: failure.InvalidInput, wants: []string{"bad.proto:7:3: syntax error"}},
		{name: "a field the message lacks", url: closed,
			opts:  map[string]any{"method": "places.v1.Places/Nearest", "proto_files": places, "import_paths": placesPaths},
			input: `{"data": [{"message": {"locaton": {}}}]}`, kind: failure.InvalidInput,
			wants: []string{"m.json:1:24: data[0].message.locaton: no field \"locaton\" in places.v1.NearestRequest (fields: location, at, tags, hints)"}},
		{name: "unreachable", url: closed, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"},
			input: good, kind: failure.Environment, wants: []string{"grpc server at " + closed + " not ready"}},
		{name: "an HTTP/1 port", url: strings.TrimPrefix(http1.URL, "http://"), opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"},
			input: good, kind: failure.InvalidInput, wants: []string{"answers, but not as a gRPC server: it speaks HTTP/1.x"}},
		{name: "a service the server lacks", url: demoAddr, opts: map[string]any{"method": "acme.Other/Call"},
			input: good, kind: failure.InvalidInput,
			wants: []string{"does not serve acme.Other (its reflection lists: grpc.reflection.v1.ServerReflection, grpc.reflection.v1alpha.ServerReflection, perfscen.demo.v1.Demo)"}},
		{name: "a method the server lacks", url: demoAddr,
			opts:  map[string]any{"method": "places.v1.Places/Nearest", "proto_files": places, "import_paths": placesPaths},
			input: `{"data": [{"message": {}}]}`, kind: failure.InvalidInput,
			wants: []string{"does not serve places.v1.Places/Nearest: unknown service places.v1.Places (its reflection lists:"}},
		{name: "a method of the service the server lacks, by reflection", url: demoAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predikt"},
			input: good, kind: failure.InvalidInput,
			wants: []string{"server.grpc.method (model m): service perfscen.demo.v1.Demo has no method Predikt (methods: Predict, Add, Generate (server streaming), Session (bidi streaming))"}},
		{name: "a method declared, not implemented", url: stubAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Generate"},
			input: `{"data": [{"message": {"count": 2}}]}`, kind: failure.InvalidInput,
			wants: []string{"server.grpc.method: grpc server at " + stubAddr + " does not implement perfscen.demo.v1.Demo/Generate: its first call (m.json:1 data[0]) was answered UNIMPLEMENTED: method Generate not implemented"}},
		{name: "no reflection", url: bareAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"},
			input: good, kind: failure.InvalidInput, wants: []string{"server.grpc.reflection:", "offers no server reflection", "proto_files or a protoset"}},
		{name: "a server figure", url: demoAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"}, input: good,
			edit: func(p *plan.Plan) {
				p.Checks.Thresholds = []plan.Threshold{{Text: "server_queue < 1ms", Metric: "server_queue"}}
			}, kind: failure.InvalidInput, wants: []string{"no server-side figures: threshold \"server_queue < 1ms\""}},
		{name: "a batch", url: demoAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"}, input: good,
			edit: func(p *plan.Plan) { p.Points[0].BatchSize = 4 }, kind: failure.InvalidInput, wants: []string{"batch size 4"}},
		{name: "two sources", url: demoAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict", "reflection": true, "protoset": "x.pb"},
			input: good, kind: failure.InvalidInput, wants: []string{"server.grpc.reflection: give one source of descriptors"}},
		{name: "a key the kind lacks", url: demoAddr, opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict", "metdata": map[string]any{}},
			input: good, kind: failure.InvalidInput, wants: []string{"server.grpc", "metdata"}},
		{name: "replies on a client-streaming method, no server needed", url: closed,
			opts:  map[string]any{"method": "places.v1.Places/Visit", "proto_files": places, "import_paths": placesPaths, "replies": 2},
			input: `{"data": [{"message": {}}]}`, kind: failure.InvalidInput,
			wants: []string{"server.grpc.replies: applies to server- or bidi-streaming methods, and places.v1.Places/Visit (client streaming) answers with one reply"}},
		{name: "replies on a unary method, by reflection", url: demoAddr,
			opts:  map[string]any{"method": "perfscen.demo.v1.Demo/Add", "replies": 1},
			input: `{"data": [{"message": {}}]}`, kind: failure.InvalidInput,
			wants: []string{"server.grpc.replies: applies to server- or bidi-streaming methods, and perfscen.demo.v1.Demo/Add (unary)"}},
		{name: "a bad URL", url: "grpc://nohost", opts: map[string]any{"method": "perfscen.demo.v1.Demo/Predict"},
			input: good, kind: failure.InvalidInput, wants: []string{"server.url", "want host:port"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := testPlan(dir, plan.Server{URL: tc.url}, tc.opts, jsonModel(t, dir, "m", tc.input))
			if tc.edit != nil {
				tc.edit(p)
			}
			s, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 500 * time.Millisecond})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if got := failure.KindOf(err); got != tc.kind {
				t.Errorf("failure kind %v, want %v: %v", got, tc.kind, err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
