package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

const secret = "Bearer s3cret-token"

type variant struct {
	name string
	opts Options
	own  bool // calls go through a connection of the caller's own (ConnClient)
}

// inferer returns v's way to call Infer on c.
func inferer(t testing.TB, v variant, c Client) func(context.Context, *InferRequest) (*InferResponse, error) {
	if !v.own {
		return c.Infer
	}
	conn := c.(ConnClient).NewConn()
	if conn == nil {
		t.Fatalf("%s: NewConn returned nil", v.name)
	}
	t.Cleanup(func() { conn.Close() })
	return func(ctx context.Context, req *InferRequest) (*InferResponse, error) {
		return conn.Infer(ctx, req, 0)
	}
}

// variants starts one fake server per protocol and returns client options
// for every transport configuration worth covering.
func variants(t testing.TB) ([]variant, *fakeHTTP, *fakeGRPC) {
	fh, hs := newFakeHTTP(t)
	fg, addr := newFakeGRPC(t)
	hdr := map[string]string{"Authorization": secret}
	return []variant{
		{"http-binary", Options{Protocol: "http", URL: hs.URL, Headers: hdr}, false},
		{"http-json", Options{Protocol: "http", URL: strings.TrimPrefix(hs.URL, "http://"), Headers: hdr, JSONTensors: true}, false},
		{"http-gzip", Options{Protocol: "http", URL: hs.URL, Headers: hdr, Gzip: true}, false},
		{"grpc", Options{Protocol: "grpc", URL: addr, Headers: hdr}, false},
		{"grpc-2conns", Options{Protocol: "grpc", URL: "grpc://" + addr, Headers: hdr, MaxConnections: 2}, false},
		{"http-own", Options{Protocol: "http", URL: hs.URL, Headers: hdr}, true},
		{"grpc-own", Options{Protocol: "grpc", URL: addr, Headers: hdr}, true},
	}, fh, fg
}

func newClient(t testing.TB, opts Options) Client {
	t.Helper()
	c, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func simpleRequest(id string) *InferRequest {
	a, b := make([]int32, 16), make([]int32, 16)
	for i := range a {
		a[i], b[i] = int32(i), 1
	}
	return &InferRequest{
		Model: "simple", ID: id,
		Inputs: []Input{
			{Tensor: tensor.Tensor{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: tensor.EncodeInt32s(a)}},
			{Tensor: tensor.Tensor{Name: "INPUT1", DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: tensor.EncodeInt32s(b)}},
		},
		Parameters: map[string]any{"sequence_id": int64(0)},
	}
}

func checkSimpleOutput(t *testing.T, resp *InferResponse, name string, delta int32) {
	t.Helper()
	out, ok := resp.Output(name)
	if !ok {
		t.Fatalf("no output %s in %+v", name, resp.Outputs)
	}
	if out.DataType != tensor.INT32 || len(out.Shape) != 2 || out.Shape[1] != 16 {
		t.Fatalf("%s: %s %v", name, out.DataType, out.Shape)
	}
	v, err := tensor.DecodeInt32s(out.Raw)
	if err != nil || len(v) != 16 {
		t.Fatalf("%s: %v %v", name, v, err)
	}
	for i, x := range v {
		if x != int32(i)+delta {
			t.Fatalf("%s[%d] = %d, want %d", name, i, x, int32(i)+delta)
		}
	}
}

func TestInferSimple(t *testing.T) {
	vs, fh, fg := variants(t)
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			infer := inferer(t, v, newClient(t, v.opts))
			for i := range 3 { // reuse connections across calls
				resp, err := infer(context.Background(), simpleRequest("req-1"))
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if resp.ID != "req-1" || resp.Model != "simple" || resp.Version != "1" {
					t.Errorf("echo: id %q model %q version %q", resp.ID, resp.Model, resp.Version)
				}
				checkSimpleOutput(t, resp, "OUTPUT0", 1)
				checkSimpleOutput(t, resp, "OUTPUT1", -1)
				if resp.Timing.SendRecv <= 0 || resp.Timing.Wait < 0 {
					t.Errorf("timing %+v", resp.Timing)
				}
			}
		})
	}
	fh.mu.Lock()
	for _, h := range fh.headers {
		if h.Get("Authorization") != secret {
			t.Errorf("http request lacked the configured header: %v", h)
		}
	}
	fh.mu.Unlock()
	fg.mu.Lock()
	for _, md := range fg.md {
		if got := md.Get("authorization"); len(got) != 1 || got[0] != secret {
			t.Errorf("grpc metadata authorization = %v", got)
		}
	}
	fg.mu.Unlock()
}

func TestInferWithSharedMemory(t *testing.T) {
	vs, _, _ := variants(t)
	ctx := context.Background()
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			c := newClient(t, v.opts)
			in, err := shm.Create(shm.NewKey("in_"+v.name), 4096)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { in.Close(); in.Unlink() })
			out, err := shm.Create(shm.NewKey("out_"+v.name), 4096)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { out.Close(); out.Unlink() })
			for _, r := range []*shm.Region{in, out} {
				name := strings.TrimPrefix(r.Key(), "/")
				if err := c.RegisterSystemSharedMemory(ctx, name, r.Key(), 0, uint64(r.Size())); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { c.UnregisterSystemSharedMemory(ctx, "") })

			req := simpleRequest("")
			// INPUT1 (all ones) lives at offset 64 of the input region.
			copy(in.Bytes()[64:], req.Inputs[1].Raw)
			req.Inputs[1].Shm = &ShmRef{Region: strings.TrimPrefix(in.Key(), "/"), Offset: 64, ByteSize: 64}
			req.Inputs[1].Raw = nil
			req.Outputs = []RequestedOutput{
				{Name: "OUTPUT1", Shm: &ShmRef{Region: strings.TrimPrefix(out.Key(), "/"), Offset: 128, ByteSize: 64}},
				{Name: "OUTPUT0"},
			}
			resp, err := inferer(t, v, c)(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Outputs) != 2 || resp.Outputs[0].Name != "OUTPUT1" || resp.Outputs[0].Raw != nil {
				t.Fatalf("outputs %+v", resp.Outputs)
			}
			if resp.Outputs[0].DataType != tensor.INT32 || len(resp.Outputs[0].Shape) != 2 {
				t.Errorf("shm output lost its metadata: %+v", resp.Outputs[0])
			}
			checkSimpleOutput(t, resp, "OUTPUT0", 1)
			diff, _ := tensor.DecodeInt32s(out.Bytes()[128:192])
			for i, x := range diff {
				if x != int32(i)-1 {
					t.Fatalf("OUTPUT1 in shm [%d] = %d, want %d", i, x, i-1)
				}
			}
		})
	}
}

func TestServerErrorsAreTyped(t *testing.T) {
	vs, _, _ := variants(t)
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			c := newClient(t, v.opts)
			req := simpleRequest("")
			req.Model = "wrong_model_name"
			_, err := inferer(t, v, c)(context.Background(), req)
			var se *transport.ServerError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want *ServerError", err, err)
			}
			if errors.Is(err, transport.ErrUnavailable) {
				t.Error("server rejection matched ErrUnavailable")
			}
			if !strings.HasPrefix(se.Message, "Request for unknown model") || se.Op != "infer" {
				t.Errorf("ServerError %+v", se)
			}
			if v.opts.Protocol == "http" && se.HTTPStatus != 400 {
				t.Errorf("HTTPStatus = %d", se.HTTPStatus)
			}
			if v.opts.Protocol == "grpc" && se.GRPCCode != codes.InvalidArgument {
				t.Errorf("GRPCCode = %v", se.GRPCCode)
			}
			if _, err := c.ModelMetadata(context.Background(), "nope", ""); !errors.As(err, &se) {
				t.Errorf("metadata of unknown model: %v", err)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens here now
	for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
		t.Run(string(proto), func(t *testing.T) {
			c := newClient(t, Options{Protocol: proto, URL: addr, Timeout: 5 * time.Second, Headers: map[string]string{"Authorization": secret}})
			_, err := c.Infer(context.Background(), simpleRequest(""))
			if !errors.Is(err, transport.ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			var se *transport.ServerError
			if errors.As(err, &se) {
				t.Error("transport failure typed as ServerError")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks a header value: %v", err)
			}
			if _, err := c.ServerLive(context.Background()); !errors.Is(err, transport.ErrUnavailable) {
				t.Errorf("ServerLive err = %v", err)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := newClient(t, Options{Protocol: "http", URL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := c.Infer(context.Background(), simpleRequest(""))
	if !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrUnavailable wrapping DeadlineExceeded", err)
	}
}

func TestMalformedReplies(t *testing.T) {
	tests := []struct {
		name    string
		header  string
		body    string
		wantErr string
	}{
		{"truncated binary", "60", `{"model_name":"m","outputs":[{"name":"o","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}}]}` + "1234", "only 4 remain"},
		{"header too long", "999", `{}`, "outside body length"},
		{"bad json", "", `{"outputs":`, "decoding reply JSON"},
		{"inconsistent tensor", "", `{"outputs":[{"name":"o","shape":[3],"datatype":"INT32","data":[1,2]}]}`, "data has 2 elements"},
		{"no data", "", `{"outputs":[{"name":"o","shape":[1],"datatype":"INT32"}]}`, "carries no data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					hl := tc.header
					if tc.name == "truncated binary" {
						hl = strconv.Itoa(len(tc.body) - 4)
					}
					w.Header().Set(kservev2.HeaderContentLength, hl)
				}
				w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, Options{Protocol: "http", URL: srv.URL})
			_, err := c.Infer(context.Background(), simpleRequest(""))
			var pe *transport.ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ProtocolError containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestAdminCalls(t *testing.T) {
	vs, _, _ := variants(t)
	ctx := context.Background()
	for _, v := range vs[:4] {
		t.Run(v.name, func(t *testing.T) {
			c := newClient(t, v.opts)
			if live, err := c.ServerLive(ctx); err != nil || !live {
				t.Errorf("ServerLive = %v, %v", live, err)
			}
			if ready, err := c.ServerReady(ctx); err != nil || ready {
				t.Errorf("ServerReady = %v, %v; the fake says not ready", ready, err)
			}
			if ready, err := c.ModelReady(ctx, "simple", ""); err != nil || !ready {
				t.Errorf("ModelReady(simple) = %v, %v", ready, err)
			}
			if ready, err := c.ModelReady(ctx, "nope", ""); err != nil || ready {
				t.Errorf("ModelReady(nope) = %v, %v", ready, err)
			}
			md, err := c.ServerMetadata(ctx)
			if err != nil || md.Name != "fake" || len(md.Extensions) != 1 {
				t.Errorf("ServerMetadata = %+v, %v", md, err)
			}
			mm, err := c.ModelMetadata(ctx, "simple", "1")
			if err != nil || mm.Platform != "onnxruntime_onnx" || mm.Inputs[0].Shape[0] != -1 {
				t.Errorf("ModelMetadata = %+v, %v", mm, err)
			}
			cfg, err := c.ModelConfig(ctx, "simple", "")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MaxBatchSize != 8 || len(cfg.Inputs) != 2 || cfg.Inputs[0].DataType != tensor.INT32 ||
				cfg.DynamicBatching == nil || cfg.DynamicBatching.MaxQueueDelayMicroseconds != 50 ||
				cfg.InstanceCount != 2 || cfg.SequenceBatching || len(cfg.JSON) == 0 {
				t.Errorf("ModelConfig = %+v", cfg)
			}
			stats, err := c.ModelStatistics(ctx, "simple", "")
			if err != nil || len(stats) != 1 {
				t.Fatalf("ModelStatistics = %v, %v", stats, err)
			}
			s := stats[0]
			if s.InferenceCount != 10 || s.ExecutionCount != 4 || s.InferenceStats.Success != (kservev2.StatDuration{Count: 5, Ns: 5000}) ||
				len(s.BatchStats) != 1 || s.BatchStats[0].ComputeInfer.Ns != 800 {
				t.Errorf("stats = %+v", s)
			}
			idx, err := c.RepositoryIndex(ctx)
			if err != nil || len(idx) != 1 || idx[0].State != "READY" {
				t.Errorf("RepositoryIndex = %v, %v", idx, err)
			}
			if err := c.RegisterSystemSharedMemory(ctx, "r1", "/perfscen_1_x", 0, 128); err != nil {
				t.Fatal(err)
			}
			st, err := c.SystemSharedMemoryStatus(ctx, "")
			if err != nil || len(st) != 1 || st[0] != (kservev2.SystemSharedMemoryStatus{Name: "r1", Key: "/perfscen_1_x", ByteSize: 128}) {
				t.Errorf("status = %+v, %v", st, err)
			}
			if err := c.UnregisterSystemSharedMemory(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if st, err := c.SystemSharedMemoryStatus(ctx, ""); err != nil || len(st) != 0 {
				t.Errorf("after unregister: %+v, %v", st, err)
			}
			// The fake servers have no CUDA endpoint: the request
			// reached them and their refusal comes back as theirs.
			var se *transport.ServerError
			if err := c.RegisterCUDASharedMemory(ctx, "g", make([]byte, 64), 0, 64); !errors.As(err, &se) {
				t.Errorf("CUDA register err = %v, want the server's answer", err)
			}
		})
	}
}

func TestStream(t *testing.T) {
	_, addr := newFakeGRPC(t)
	c := newClient(t, Options{Protocol: "grpc", URL: addr})
	sc, ok := c.(Streamer)
	if !ok {
		t.Fatal("grpc client does not implement Streamer")
	}
	if _, ok := newClient(t, Options{Protocol: "http", URL: "127.0.0.1:1"}).(Streamer); ok {
		t.Error("http client claims to stream")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := sc.InferStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "bad", "c"}
	for _, id := range ids {
		req := simpleRequest(id)
		if id == "bad" {
			req.Model = "nope"
		}
		if err := s.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		resp, err := s.Recv()
		if id == "bad" {
			var se *transport.ServerError
			if !errors.As(err, &se) || resp == nil || resp.ID != "bad" {
				t.Fatalf("bad request: resp %+v err %v", resp, err)
			}
			continue
		}
		if err != nil || resp.ID != id {
			t.Fatalf("Recv = %+v, %v; want id %s", resp, err, id)
		}
		checkSimpleOutput(t, resp, "OUTPUT0", 1)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, opts := range []Options{
		{Protocol: "ftp", URL: "x:1"},
		{Protocol: "http"},
		{Protocol: "http", URL: "ftp://x:1"},
		{Protocol: "http", URL: "http://x:1/v2"},
		{Protocol: "grpc", URL: "x:1", MaxConnections: -1},
	} {
		if c, err := New(context.Background(), opts); err == nil {
			c.Close()
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
	_, err := New(context.Background(), Options{Protocol: "ftp", URL: "x:1"})
	if err == nil || !strings.Contains(err.Error(), "[grpc, http]") {
		t.Errorf("error should list the protocols: %v", err)
	}
}

// TestLargeMessages crosses grpc-go's 4 MiB default receive limit in both
// directions, which Triton's INT32_MAX limit allows.
func TestLargeMessages(t *testing.T) {
	vs, _, _ := variants(t)
	const n = 1 << 20 // 4 MiB per INT32 tensor; the reply carries two
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i], b[i] = int32(i), 1
	}
	req := &InferRequest{Model: "simple", Inputs: []Input{
		{Tensor: tensor.Tensor{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1, n}, Raw: tensor.EncodeInt32s(a)}},
		{Tensor: tensor.Tensor{Name: "INPUT1", DataType: tensor.INT32, Shape: []int64{1, n}, Raw: tensor.EncodeInt32s(b)}},
	}}
	for _, v := range []variant{vs[0], vs[3], vs[6]} {
		t.Run(v.name, func(t *testing.T) {
			resp, err := inferer(t, v, newClient(t, v.opts))(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := resp.Output("OUTPUT0")
			got, _ := tensor.DecodeInt32s(out.Raw)
			if len(got) != n || got[n-1] != n {
				t.Fatalf("OUTPUT0 has %d elements, last %v", len(got), got[len(got)-1:])
			}
		})
	}
}
