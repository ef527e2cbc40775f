package tfserving

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// flavourOn serves the built-in models through the TF Serving flavour on
// loopback ephemeral ports.
func flavourOn(t *testing.T, params map[string]map[string]string) (grpcAddr, restAddr string) {
	t.Helper()
	core := flavourCore(t, params)
	fe, err := Kind{}.ServeFlavour(context.Background(), core, map[string]string{"grpc": "127.0.0.1:0", "rest": "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	eps := fe.Endpoints()
	return eps["grpc"], eps["rest"]
}

// flavourCore is the reference server's models without listeners, closed
// when the test ends (after the front-ends registered later).
func flavourCore(t *testing.T, params ...map[string]map[string]string) *refserver.Server {
	t.Helper()
	opts := refserver.Options{HTTPAddr: "-", GRPCAddr: "-"}
	if len(params) > 0 {
		opts.ModelParams = params[0]
	}
	core, err := refserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	return core
}

// onePlan is a plan of one model at concurrency 1 on srv, over proto.
func onePlan(srv plan.Server, proto plan.Protocol, m plan.Model, shapes map[string][]int64) *plan.Plan {
	srv.Kind, srv.Protocol = KindName, proto
	if srv.Timeout == 0 {
		srv.Timeout = 5 * time.Second
	}
	if srv.TensorFormat == "" {
		srv.TensorFormat = plan.TensorAuto
	}
	if m.Alias == "" {
		m.Alias = m.Name
	}
	if m.Input.Kind == "" {
		m.Input.Kind = "random"
	}
	return &plan.Plan{Servers: []plan.Server{srv}, Models: []plan.Model{m}, Points: []plan.Point{{
		ID: m.Alias + "/c=1", Model: m.Alias, Protocol: proto, SharedMemory: plan.ShmNone, BatchSize: 1, Shapes: shapes,
		Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1},
	}}}
}

func open(t *testing.T, p *plan.Plan) (kinds.Server, error) {
	t.Helper()
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 2 * time.Second})
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// call sends step 0 of the point's data, checking outputs against want.
func call(t *testing.T, s kinds.Server, p *plan.Plan, want []tensor.Tensor) *kinds.Outcome {
	t.Helper()
	pt, err := s.Point(context.Background(), &p.Points[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := pt.NewCaller(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	step := pt.Data().Streams[0][0]
	step.Expected = want
	start := time.Now()
	out := &kinds.Outcome{}
	c.Call(context.Background(), func() time.Duration { return time.Since(start) }, &kinds.Request{Step: inputdata.Request{Step: &step}, Check: want != nil}, out)
	return out
}

// Over both protocols and both REST formats the flavour answers what the
// model computes, the reply is validated, and a wrong expectation is a
// mismatch, not an error; the server's own figures count the requests.
func TestPredictAgainstFlavour(t *testing.T) {
	grpcAddr, restAddr := flavourOn(t, nil)
	for _, tc := range []struct {
		proto  plan.Protocol
		format string
	}{{plan.ProtocolGRPC, ""}, {plan.ProtocolHTTP, formatRow}, {plan.ProtocolHTTP, formatColumnar}} {
		t.Run(string(tc.proto)+"/"+tc.format, func(t *testing.T) {
			srv := plan.Server{GRPCURL: grpcAddr, HTTPURL: restAddr, MetricsURL: "http://" + restAddr + promPath}
			if tc.format != "" {
				srv.Options = map[string]any{"rest_format": tc.format}
			}
			p := onePlan(srv, tc.proto, plan.Model{Name: "simple"}, nil)
			s, err := open(t, p)
			if err != nil {
				t.Fatal(err)
			}
			pt, _ := s.Point(context.Background(), &p.Points[0])
			before, err := pt.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			in := pt.Data().Streams[0][0].Inputs
			a, _ := tensor.DecodeInt32s(in[0].Raw)
			b, _ := tensor.DecodeInt32s(in[1].Raw)
			sum, diff := make([]int32, len(a)), make([]int32, len(a))
			for i := range a {
				sum[i], diff[i] = a[i]+b[i], a[i]-b[i]
			}
			want := []tensor.Tensor{
				{Name: "OUTPUT0", DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: tensor.EncodeInt32s(sum)},
				{Name: "OUTPUT1", DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: tensor.EncodeInt32s(diff)},
			}
			if in[0].Name != "INPUT0" {
				t.Fatalf("inputs %v", in)
			}
			out := call(t, s, p, want)
			if out.Err != nil || !out.Checked || out.Mismatch != "" {
				t.Fatalf("outcome %+v", out)
			}
			if out.Done <= out.Sent || out.Wait <= 0 {
				t.Errorf("timing %+v", out)
			}
			want[1].Raw = tensor.EncodeInt32s(sum)
			if out := call(t, s, p, want); out.Err != nil || out.Mismatch == "" || !strings.Contains(out.Mismatch, "OUTPUT1") {
				t.Errorf("a wrong expectation: %+v", out)
			}
			after, err := pt.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := after.Success.Count - before.Success.Count; n != 2 || after.Success.Ns <= before.Success.Ns {
				t.Errorf("server counted %d successes (%+v → %+v), want 2", n, before, after)
			}
			if info := s.Info(); info.Name != serverName || info.URL == "" {
				t.Errorf("info %+v", info)
			}
		})
	}
}

// Half-precision tensors travel over gRPC (tensor_content out, half_val
// back) and are refused over REST, before any load.
func TestHalfPrecision(t *testing.T) {
	grpcAddr, restAddr := flavourOn(t, nil)
	srv := plan.Server{GRPCURL: grpcAddr, HTTPURL: restAddr}
	p := onePlan(srv, plan.ProtocolGRPC, plan.Model{Name: "identity_fp16"}, map[string][]int64{"INPUT0": {3}})
	s, err := open(t, p)
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := s.Point(context.Background(), &p.Points[0])
	in := pt.Data().Streams[0][0].Inputs[0]
	want := []tensor.Tensor{{Name: "OUTPUT0", DataType: tensor.FP16, Shape: in.Shape, Raw: in.Raw}}
	if out := call(t, s, p, want); out.Err != nil || out.Mismatch != "" {
		t.Fatalf("outcome %+v", out)
	}
	p = onePlan(srv, plan.ProtocolHTTP, plan.Model{Name: "identity_fp16"}, map[string][]int64{"INPUT0": {3}})
	if _, err := open(t, p); failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "INPUT0 is FP16, which TF Serving's REST API cannot carry; use protocol: grpc") {
		t.Errorf("REST with FP16: %v", err)
	}
}

// What the scenario asks of a TF Serving server that it does not have is
// exit 2, named, before any load.
func TestOpenInvalid(t *testing.T) {
	grpcAddr, restAddr := flavourOn(t, nil)
	dir := t.TempDir()
	data := filepath.Join(dir, "data.json")
	if err := os.WriteFile(data, []byte(`{"data": [{"INPUT0": [1, 2], "INPUT9": [3]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		proto plan.Protocol
		srv   plan.Server
		model plan.Model
		want  string
	}{
		{"unknown model grpc", plan.ProtocolGRPC, plan.Server{}, plan.Model{Name: "nosuch"}, `model "nosuch" is not served by the TF Serving at`},
		{"unknown model rest", plan.ProtocolHTTP, plan.Server{}, plan.Model{Name: "nosuch"}, "Could not find any versions of model nosuch"},
		{"unknown version", plan.ProtocolGRPC, plan.Server{}, plan.Model{Name: "simple", Version: "7"}, `model "simple" version 7 is not served`},
		// The status API ignores labels; the metadata call refuses an
		// unknown one: the scenario's mistake (exit 3 before).
		{"unknown version label grpc", plan.ProtocolGRPC, plan.Server{}, plan.Model{Name: "simple", Version: "canary"}, `the server has no version labelled "canary"`},
		{"unknown version label rest", plan.ProtocolHTTP, plan.Server{}, plan.Model{Name: "simple", Version: "canary"}, `the server has no version labelled "canary"`},
		{"unknown signature", plan.ProtocolGRPC, plan.Server{Options: map[string]any{"signature_name": "predict"}}, plan.Model{Name: "simple"},
			`server.tfserving.signature_name: model "simple" has no signature "predict"; its signatures: serving_default`},
		{"input the model lacks", plan.ProtocolHTTP, plan.Server{}, plan.Model{Name: "identity_fp32", Input: plan.Input{Kind: "json", Paths: []string{data}}},
			"INPUT9"},
		{"bad rest_format", plan.ProtocolHTTP, plan.Server{Options: map[string]any{"rest_format": "rows"}}, plan.Model{Name: "simple"}, `server.tfserving.rest_format: "rows"`},
		{"unknown option", plan.ProtocolHTTP, plan.Server{Options: map[string]any{"signature": "x"}}, plan.Model{Name: "simple"}, `server.tfserving: json: unknown field "signature"`},
		{"sequence model", plan.ProtocolGRPC, plan.Server{}, plan.Model{Name: "simple", Sequence: true}, "TF Serving has no sequence batching"},
		{"tensor_format", plan.ProtocolHTTP, plan.Server{TensorFormat: plan.TensorBinary}, plan.Model{Name: "simple"}, "server.tensor_format: applies to kind kserve"},
		{"metrics_url not prometheus", plan.ProtocolGRPC, plan.Server{MetricsURL: "http://" + restAddr + "/v1/models/simple"}, plan.Model{Name: "simple"},
			"server.metrics_url: not Prometheus text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.srv.GRPCURL, c.srv.HTTPURL = grpcAddr, restAddr
			var shapes map[string][]int64
			if c.model.Name == "identity_fp32" {
				shapes = map[string][]int64{"INPUT0": {2}}
			}
			_, err := open(t, onePlan(c.srv, c.proto, c.model, shapes))
			if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (%s), want invalid input naming %q", err, failure.KindOf(err), c.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
	t.Run("check on a server breakdown", func(t *testing.T) {
		p := onePlan(plan.Server{GRPCURL: grpcAddr}, plan.ProtocolGRPC, plan.Model{Name: "simple"}, nil)
		p.Checks.Thresholds = []plan.Threshold{{Text: "server_queue < 1ms", Metric: "server_queue", Op: "<", Value: 1000}}
		_, err := open(t, p)
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), `TF Serving reports no queue or compute breakdown, so threshold "server_queue < 1ms" would have nothing to judge`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("input named with the signature's", func(t *testing.T) {
		_, err := open(t, onePlan(plan.Server{HTTPURL: restAddr}, plan.ProtocolHTTP, plan.Model{Name: "identity_fp32", Input: plan.Input{Kind: "json", Paths: []string{data}}}, nil))
		if err == nil || !strings.Contains(err.Error(), "signature serving_default takes INPUT0") {
			t.Errorf("err = %v", err)
		}
	})
}

// A port of another server, or of the other protocol, is named for what
// it is (exit 2); a port nobody listens on is exit 3.
func TestWrongPort(t *testing.T) {
	tfGRPC, tfREST := flavourOn(t, nil)
	triton, err := refserver.New(refserver.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Version: "2.46.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := triton.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { triton.Close() })
	cases := []struct {
		name  string
		proto plan.Protocol
		url   string
		kind  failure.Kind
		want  string
	}{
		{"triton http", plan.ProtocolHTTP, triton.HTTPAddr(), failure.InvalidInput, "is a KServe v2 HTTP endpoint (triton 2.46.0), not TensorFlow Serving: use its kind (e.g. kind: kserve), or TF Serving's REST port (8501 by default)"},
		{"triton grpc", plan.ProtocolGRPC, triton.GRPCAddr(), failure.InvalidInput, "is a KServe v2 gRPC endpoint (triton 2.46.0), not TensorFlow Serving"},
		{"rest port for grpc", plan.ProtocolGRPC, tfREST, failure.InvalidInput, "answers HTTP/1.x, not gRPC (is it the REST port? use protocol: http"},
		{"grpc port for rest", plan.ProtocolHTTP, tfGRPC, failure.InvalidInput, "answers HTTP/2 frames, not HTTP/1.1 (is it the gRPC port? use protocol: grpc"},
		{"nobody there", plan.ProtocolGRPC, "127.0.0.1:1", failure.Environment, "not ready within"},
		// Another server's plain-text 404 says nothing of TF Serving's
		// models ("not served by the TF Serving" before).
		{"plain-text 404", plan.ProtocolHTTP, plain404(t), failure.InvalidInput, "does not answer as TensorFlow Serving (asked for model \"simple\"'s status it answered 404 without TF Serving's JSON error)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := open(t, onePlan(plan.Server{URL: c.url}, c.proto, plan.Model{Name: "simple"}, nil))
			if failure.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v (%s), want %s naming %q", err, failure.KindOf(err), c.kind, c.want)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

// A model TF Serving lacks is answered in its own words, a 404 with a JSON
// error over REST and NOT_FOUND over gRPC: either way the model is not
// served (exit 2), never "not TF Serving, wrong port?" (REST said so once
// the error had been taken out of its JSON).
func TestUnknownModelNamed(t *testing.T) {
	tfGRPC, tfREST := flavourOn(t, nil)
	for _, c := range []struct {
		proto plan.Protocol
		url   string
	}{{plan.ProtocolHTTP, tfREST}, {plan.ProtocolGRPC, tfGRPC}} {
		_, err := open(t, onePlan(plan.Server{URL: c.url}, c.proto, plan.Model{Name: "nosuch"}, nil))
		want := fmt.Sprintf("model \"nosuch\" is not served by the TF Serving at %s (%s): ", c.url, c.proto)
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "does not answer as TensorFlow Serving") {
			t.Errorf("%s: err = %v (%s), want exit 2 saying %q", c.proto, err, failure.KindOf(err), want)
		}
	}
}

// A URL without a port takes TF Serving's port for the protocol.
func TestSplitURL(t *testing.T) {
	for _, c := range []struct {
		proto     plan.Protocol
		in, want  string
		tlsScheme bool
	}{
		{plan.ProtocolGRPC, "tfs.example", "tfs.example:8500", false},
		{plan.ProtocolHTTP, "https://tfs.example", "tfs.example:8501", true},
		{plan.ProtocolHTTP, "localhost:9001/", "localhost:9001", false},
		{plan.ProtocolGRPC, "[::1]", "[::1]:8500", false},
		{plan.ProtocolGRPC, "grpcs://[::1]:7", "[::1]:7", true},
	} {
		got, tlsScheme, err := splitURL(c.proto, c.in)
		if err != nil || got != c.want || tlsScheme != c.tlsScheme {
			t.Errorf("splitURL(%s, %q) = %q, %v, %v; want %q, %v", c.proto, c.in, got, tlsScheme, err, c.want, c.tlsScheme)
		}
	}
	for _, bad := range []string{"ftp://x:1", "http://x:1/v1/models"} {
		if _, _, err := splitURL(plan.ProtocolHTTP, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// plain404 is a web server answering every path 404 in plain text, as
// another service's port does.
func plain404(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
