package refserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

func TestParseFlavor(t *testing.T) {
	for in, want := range map[string]Flavor{"": FlavorTriton, "triton": FlavorTriton, "kserve": FlavorKServe} {
		if got, err := ParseFlavor(in); err != nil || got != want {
			t.Errorf("ParseFlavor(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFlavor("mlserver"); err == nil || !strings.Contains(err.Error(), "kserve") {
		t.Errorf("ParseFlavor(mlserver) err = %v, want one listing the flavours", err)
	}
	if _, err := New(Options{Flavor: "bogus"}); err == nil {
		t.Error("New accepted an unknown flavour")
	}
}

// The plain flavour answers only the core KServe v2 REST paths; every
// Triton extension path is unknown there, and known on Triton's flavour.
func TestPlainHTTPEndpoints(t *testing.T) {
	plain := startServer(t, Options{Flavor: FlavorKServe})
	triton := startServer(t, Options{})
	cases := []struct {
		method, path string
		plain        int
	}{
		{"GET", "/v2", 200},
		{"GET", "/v2/health/live", 200},
		{"GET", "/v2/health/ready", 200},
		{"GET", "/v2/models/simple", 200},
		{"GET", "/v2/models/simple/ready", 200},
		{"GET", "/v2/models/simple/versions/1/ready", 200},
		{"GET", "/v2/models/simple/config", 404},
		{"GET", "/v2/models/simple/stats", 404},
		{"GET", "/v2/models/stats", 404},
		{"POST", "/v2/repository/index", 404},
		{"GET", "/v2/systemsharedmemory/status", 404},
		{"GET", "/v2/cudasharedmemory/status", 404},
	}
	for _, c := range cases {
		if r := do(t, plain, c.method, c.path, nil, nil); r.status != c.plain {
			t.Errorf("plain %s %s = %d %s, want %d", c.method, c.path, r.status, r.body, c.plain)
		}
		if c.plain == 404 {
			if r := do(t, triton, c.method, c.path, nil, nil); r.status == 404 {
				t.Errorf("triton %s %s = 404; the extension path should exist there", c.method, c.path)
			}
		}
	}
	var md kservev2.ServerMetadata
	if err := json.Unmarshal(do(t, plain, "GET", "/v2", nil, nil).body, &md); err != nil {
		t.Fatal(err)
	}
	if md.Name != KServeServerName || md.Extensions == nil || len(md.Extensions) != 0 {
		t.Errorf("plain metadata = %+v, want name %s and an empty extension list", md, KServeServerName)
	}
}

func TestPlainHTTPInferIsJSONOnly(t *testing.T) {
	s := startServer(t, Options{Flavor: FlavorKServe})
	jsonBody := `{"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"FP16","data":[1.5,-2]}]}`
	r := do(t, s, "POST", "/v2/models/identity_fp16/infer", map[string]string{"Content-Type": "application/json"}, []byte(jsonBody))
	if r.status != 200 {
		t.Fatalf("FP16 as JSON: %d %s", r.status, r.body)
	}
	if r.header.Get(kservev2.HeaderContentLength) != "" || !strings.Contains(string(r.body), `"data":[1.5,-2]`) {
		t.Errorf("FP16 reply = %s (header length %q), want FP16 data as JSON numbers", r.body, r.header.Get(kservev2.HeaderContentLength))
	}
	refused := []struct {
		name, body string
		header     map[string]string
	}{
		{"binary input", `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","parameters":{"binary_data_size":4}}]}` + "\x01\x00\x00\x00",
			map[string]string{kservev2.HeaderContentLength: "95"}},
		{"binary_data_output", `{"parameters":{"binary_data_output":true},"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","data":[1]}]}`, nil},
		{"binary_data output", `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","data":[1]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}}]}`, nil},
		{"shared memory", `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}}]}`, nil},
		{"classification", `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","data":[1]}],"outputs":[{"name":"OUTPUT0","parameters":{"classification":1}}]}`, nil},
	}
	for _, c := range refused {
		r := do(t, s, "POST", "/v2/models/identity_int32/infer", c.header, []byte(c.body))
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "not supported") {
			t.Errorf("%s: %d %s, want 400 naming what is not supported", c.name, r.status, r.body)
		}
	}
	ok := `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"INT32","data":[7]}],"outputs":[{"name":"OUTPUT0"}]}`
	if r := do(t, s, "POST", "/v2/models/identity_int32/infer", nil, []byte(ok)); r.status != 200 || !strings.Contains(string(r.body), `"data":[7]`) {
		t.Errorf("plain JSON infer: %d %s", r.status, r.body)
	}
}

func TestPlainGRPCCoreOnly(t *testing.T) {
	s := startServer(t, Options{Flavor: FlavorKServe})
	g := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := g.ServerMetadata(ctx, &inferencepb.ServerMetadataRequest{})
	if err != nil || md.GetName() != KServeServerName || len(md.GetExtensions()) != 0 {
		t.Fatalf("ServerMetadata = %v, %v; want %s without extensions", md, err, KServeServerName)
	}
	if _, err := g.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: "simple"}); err != nil {
		t.Errorf("ModelMetadata: %v", err)
	}
	unimpl := map[string]error{}
	_, unimpl["ModelConfig"] = g.ModelConfig(ctx, &inferencepb.ModelConfigRequest{Name: "simple"})
	_, unimpl["ModelStatistics"] = g.ModelStatistics(ctx, &inferencepb.ModelStatisticsRequest{Name: "simple"})
	_, unimpl["RepositoryIndex"] = g.RepositoryIndex(ctx, &inferencepb.RepositoryIndexRequest{})
	_, unimpl["SystemSharedMemoryStatus"] = g.SystemSharedMemoryStatus(ctx, &inferencepb.SystemSharedMemoryStatusRequest{})
	st, err := g.ModelStreamInfer(ctx)
	if err == nil {
		_, err = st.Recv()
	}
	unimpl["ModelStreamInfer"] = err
	for name, err := range unimpl {
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: %v, want Unimplemented", name, err)
		}
	}
	in := &inferencepb.ModelInferRequest{ModelName: "identity_int32",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 1}}},
		RawInputContents: [][]byte{{5, 0, 0, 0}},
	}
	if _, err := g.ModelInfer(ctx, in); err != nil {
		t.Errorf("ModelInfer with raw contents: %v", err)
	}
	in.Inputs[0].Parameters = map[string]*inferencepb.InferParameter{kservev2.ParamShmRegion: {ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: "r"}}}
	if _, err := g.ModelInfer(ctx, in); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ModelInfer with a shared-memory input: %v, want InvalidArgument", err)
	}
}
