package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

func get(t *testing.T, url string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}

// Triton's health/metadata examples assert the name "triton"; the version
// stays perfscen's, and the extension list is Triton's.
func TestServerMetadataIsTriton(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}, Version: "1.2.3-test"})
	want := []string{"classification", "sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy",
		"model_configuration", "system_shared_memory", "cuda_shared_memory", "binary_tensor_data", "parameters", "statistics"}
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			md, err := newClient(t, s, proto).ServerMetadata(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if md.Name != "triton" || md.Version != "1.2.3-test" {
				t.Errorf("name %q version %q", md.Name, md.Version)
			}
			for _, ext := range want {
				if !slices.Contains(md.Extensions, ext) {
					t.Errorf("extension %q missing from %v", ext, md.Extensions)
				}
			}
		})
	}
}

func TestHTTPCudaSharedMemoryWithoutGPU(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	base := "http://" + s.HTTPAddr() + "/v2/cudasharedmemory"
	if r := get(t, base+"/status"); r.status != 200 || strings.TrimSpace(string(r.body)) != "[]" {
		t.Errorf("status: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/unregister", "/region/output_data/unregister"} {
		if r := post(t, s, "/v2/cudasharedmemory"+path, nil, nil); r.status != 200 {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	r := post(t, s, "/v2/cudasharedmemory/region/output_data/register", nil, []byte(`{"raw_handle":{"b64":"AAAA"},"device_id":0,"byte_size":64}`))
	if r.status != 400 || !strings.Contains(string(r.body), "GPUs not supported") {
		t.Errorf("register: %d %s", r.status, r.body)
	}
}

// A load with a config override applies it; a malformed one fails to load
// and the model keeps its previous config.
func TestLoadWithConfigOverride(t *testing.T) {
	for _, k := range transports {
		t.Run(k.String(), func(t *testing.T) {
			s := start(t, refserver.Options{Models: []string{"simple"}})
			c, infer := connect(t, s, k)
			proto := k.proto
			ctx := ctxT(t)
			override := `{"max_batch_size": 4, "instance_group": [{"count": 2, "kind": "KIND_CPU"}], "dynamic_batching": {"max_queue_delay_microseconds": 500}}`
			if err := loadWithConfig(t, s, proto, override); err != nil {
				t.Fatal(err)
			}
			cfg, err := c.ModelConfig(ctx, "simple", "")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MaxBatchSize != 4 || cfg.InstanceCount != 2 || cfg.DynamicBatching == nil || cfg.DynamicBatching.MaxQueueDelayMicroseconds != 500 {
				t.Errorf("config after override: %+v", cfg)
			}
			ones := i32(seq(16, func(int) int32 { return 1 })...)
			big := append(append(append(append(append([]byte{}, ones...), ones...), ones...), ones...), ones...)
			_, err = infer(ctx, &client.InferRequest{Model: "simple", Inputs: []client.Input{
				input("INPUT0", tensor.INT32, []int64{5, 16}, big), input("INPUT1", tensor.INT32, []int64{5, 16}, big)}})
			if err == nil || !strings.Contains(err.Error(), "batch-size must be <= 4") {
				t.Errorf("batch 5 after max_batch_size 4: %v", err)
			}
			for _, bad := range []string{`{"max_batch_size": `, `{"input": [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [16]}]}`, `{"unknown_field": 1}`} {
				err := loadWithConfig(t, s, proto, bad)
				if err == nil || !strings.Contains(err.Error(), "failed to load") {
					t.Errorf("override %s: %v", bad, err)
				}
			}
			if cfg, err := c.ModelConfig(ctx, "simple", ""); err != nil || cfg.MaxBatchSize != 4 {
				t.Errorf("a refused override changed the model: %+v %v", cfg, err)
			}
			if err := c.LoadModel(ctx, "simple"); err != nil {
				t.Fatal(err)
			}
			if cfg, err := c.ModelConfig(ctx, "simple", ""); err != nil || cfg.MaxBatchSize != 8 || cfg.DynamicBatching != nil {
				t.Errorf("a load without override keeps the override: %+v %v", cfg, err)
			}
		})
	}
}

// The metrics port serves Triton's nv_inference_* families, agreeing with
// the statistics extension.
func TestMetricsPort(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple", "accumulate"}, MetricsAddr: "127.0.0.1:0"})
	c := newClient(t, s, "http")
	ctx := ctxT(t)
	a := i32(seq(16, func(i int) int32 { return int32(i) })...)
	for range 3 {
		if _, err := c.Infer(ctx, &client.InferRequest{Model: "simple", Inputs: []client.Input{
			input("INPUT0", tensor.INT32, []int64{1, 16}, a), input("INPUT1", tensor.INT32, []int64{1, 16}, a)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Infer(ctx, &client.InferRequest{Model: "simple", Inputs: []client.Input{input("INPUT0", tensor.INT32, []int64{1, 16}, a)}}); err == nil {
		t.Fatal("request missing an input succeeded")
	}
	r := get(t, "http://"+s.MetricsAddr()+"/metrics")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", r.status, r.header.Get("Content-Type"))
	}
	body := string(r.body)
	for _, line := range []string{
		"# TYPE nv_inference_request_success counter",
		`nv_inference_request_success{model="simple",version="1"} 3`,
		`nv_inference_count{model="simple",version="1"} 3`,
		`nv_inference_exec_count{model="simple",version="1"} 3`,
		`nv_inference_request_failure{model="simple",version="1"} 0`,
		`nv_inference_request_success{model="accumulate",version="1"} 0`,
		`nv_inference_pending_request_count{model="simple",version="1"} 0`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics lack %q:\n%s", line, body)
		}
	}
	for _, fam := range []string{"nv_inference_request_duration_us", "nv_inference_queue_duration_us",
		"nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us"} {
		if !strings.Contains(body, "# TYPE "+fam+" counter\n"+fam+`{model="accumulate"`) {
			t.Errorf("family %s missing or malformed", fam)
		}
	}
	if r := get(t, "http://"+s.MetricsAddr()+"/v2/health/ready"); r.status != 404 {
		t.Errorf("metrics port serves other paths: %d", r.status)
	}
}

// INT32 arithmetic wraps in the add models, as in Triton's examples:
// perf_analyzer's random data overflows.
func TestInt32Wraps(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple", "accumulate"}})
	for _, k := range transports {
		t.Run(k.String(), func(t *testing.T) {
			_, infer := connect(t, s, k)
			proto := k.String()
			ctx := ctxT(t)
			max := i32(seq(16, func(int) int32 { return 2147483647 })...)
			resp, err := infer(ctx, &client.InferRequest{Model: "simple", Inputs: []client.Input{
				input("INPUT0", tensor.INT32, []int64{1, 16}, max), input("INPUT1", tensor.INT32, []int64{1, 16}, max)}})
			if err != nil {
				t.Fatal(err)
			}
			if got := int32sOf(resp.Outputs[0].Raw); got[0] != -2 {
				t.Errorf("simple: MaxInt32+MaxInt32 = %d, want -2", got[0])
			}
			var last int32
			for i, v := range []int32{2147483647, 2147483647, 5} {
				resp, err := infer(ctx, &client.InferRequest{Model: "accumulate",
					Inputs:     []client.Input{input("INPUT", tensor.INT32, []int64{1}, i32(v))},
					Parameters: map[string]any{"sequence_id": proto + "-wrap", "sequence_start": i == 0, "sequence_end": i == 2}})
				if err != nil {
					t.Fatalf("accumulate step %d: %v", i, err)
				}
				last = int32sOf(resp.Outputs[0].Raw)[0]
			}
			if last != 3 {
				t.Errorf("accumulate: wrapped sum %d, want 3", last)
			}
		})
	}
}

// The example models' contracts, on both protocols.
func TestTritonExampleModels(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple_int8", "simple_string", "simple_identity", "custom_identity_int32", "simple_sequence"}})
	strs := func(v ...string) []byte {
		var elems [][]byte
		for _, x := range v {
			elems = append(elems, []byte(x))
		}
		return tensor.EncodeBytesElements(elems)
	}
	decimal := func(f func(i int) int) []string {
		out := make([]string, 16)
		for i := range out {
			out[i] = strconv.Itoa(f(i))
		}
		return out
	}
	for _, k := range transports {
		t.Run(k.String(), func(t *testing.T) {
			c, infer := connect(t, s, k)
			proto := k.String()
			ctx := ctxT(t)
			// simple_int8 wraps like INT8.
			a := make([]byte, 16)
			for i := range a {
				a[i] = byte(int8(i * 10))
			}
			resp, err := infer(ctx, &client.InferRequest{Model: "simple_int8", Inputs: []client.Input{
				input("INPUT0", tensor.INT8, []int64{1, 16}, a), input("INPUT1", tensor.INT8, []int64{1, 16}, a)}})
			if err != nil {
				t.Fatal(err)
			}
			// 150 is -106 as INT8; -106 + -106 = -212 wraps to 44.
			if got := int8(resp.Outputs[0].Raw[15]); got != 44 {
				t.Errorf("simple_int8: -106 + -106 = %d, want 44", got)
			}
			// simple_string adds and subtracts decimal strings.
			resp, err = infer(ctx, &client.InferRequest{Model: "simple_string", Inputs: []client.Input{
				input("INPUT0", tensor.BYTES, []int64{1, 16}, strs(decimal(func(i int) int { return i })...)),
				input("INPUT1", tensor.BYTES, []int64{1, 16}, strs(decimal(func(int) int { return 1 })...))}})
			if err != nil {
				t.Fatal(err)
			}
			sum, err := tensor.BytesElements(resp.Outputs[0].Raw)
			if err != nil || string(sum[15]) != "16" {
				t.Errorf("simple_string OUTPUT0[15] = %q, %v", sum[15], err)
			}
			diff, _ := tensor.BytesElements(resp.Outputs[1].Raw)
			if string(diff[0]) != "-1" {
				t.Errorf("simple_string OUTPUT1[0] = %q", diff[0])
			}
			if _, err := infer(ctx, &client.InferRequest{Model: "simple_string", Inputs: []client.Input{
				input("INPUT0", tensor.BYTES, []int64{1, 16}, strs(append(decimal(func(i int) int { return i })[:15], "x")...)),
				input("INPUT1", tensor.BYTES, []int64{1, 16}, strs(decimal(func(int) int { return 1 })...))}}); err == nil {
				t.Error("simple_string accepted a non-decimal string")
			}
			// Identities.
			resp, err = infer(ctx, &client.InferRequest{Model: "simple_identity", Inputs: []client.Input{
				input("INPUT0", tensor.BYTES, []int64{1, 2}, strs("hello", "triton"))}})
			if err != nil || string(resp.Outputs[0].Raw) != string(strs("hello", "triton")) {
				t.Errorf("simple_identity: %v %v", resp, err)
			}
			big := i32(seq(2*100, func(i int) int32 { return int32(i) })...)
			resp, err = infer(ctx, &client.InferRequest{Model: "custom_identity_int32", Inputs: []client.Input{
				input("INPUT0", tensor.INT32, []int64{2, 100}, big)}})
			if err != nil || string(resp.Outputs[0].Raw) != string(big) {
				t.Errorf("custom_identity_int32: %v", err)
			}
			cfg, err := c.ModelConfig(ctx, "custom_identity_int32", "")
			if err != nil || cfg.MaxBatchSize != 1024 {
				t.Errorf("custom_identity_int32 config %+v %v", cfg, err)
			}
			// simple_sequence: OUTPUT = INPUT + START, START required.
			var outs []int32
			for i, v := range []int32{0, 11, 7} {
				resp, err := infer(ctx, &client.InferRequest{Model: "simple_sequence",
					Inputs:     []client.Input{input("INPUT", tensor.INT32, []int64{1, 1}, i32(v))},
					Parameters: map[string]any{"sequence_id": proto + "-seq", "sequence_start": i == 0, "sequence_end": i == 2}})
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, int32sOf(resp.Outputs[0].Raw)...)
			}
			if !slices.Equal(outs, []int32{1, 11, 7}) {
				t.Errorf("simple_sequence outputs %v", outs)
			}
			cfg, err = c.ModelConfig(ctx, "simple_sequence", "")
			if err != nil || !cfg.SequenceBatching {
				t.Errorf("simple_sequence config %+v %v", cfg, err)
			}
			var raw map[string]any
			if err := json.Unmarshal(cfg.JSON, &raw); err != nil || !strings.Contains(string(cfg.JSON), "CONTROL_SEQUENCE_START") {
				t.Errorf("simple_sequence config lacks its START control: %s", cfg.JSON)
			}
		})
	}
}

// loadWithConfig loads simple with a config override the way tritonclient
// sends one: a "config" parameter holding the JSON text.
func loadWithConfig(t *testing.T, s *refserver.Server, proto, cfg string) error {
	t.Helper()
	if proto == "grpc" {
		_, err := stubs(t, s).RepositoryModelLoad(ctxT(t), &inferencepb.RepositoryModelLoadRequest{ModelName: "simple",
			Parameters: map[string]*inferencepb.ModelRepositoryParameter{"config": {ParameterChoice: &inferencepb.ModelRepositoryParameter_StringParam{StringParam: cfg}}}})
		return err
	}
	body, err := json.Marshal(map[string]any{"parameters": map[string]any{"config": cfg}})
	if err != nil {
		t.Fatal(err)
	}
	r := post(t, s, "/v2/repository/models/simple/load", nil, body)
	if r.status != 200 {
		return fmt.Errorf("%d %s", r.status, r.body)
	}
	return nil
}

// What Triton's model control examples check: a repository of a given
// set of models, a larger max_batch_size override, and model files in a
// load refused as a failed repository poll (INTERNAL).
func TestModelControlLikeTritonExamples(t *testing.T) {
	repo := []string{"simple", "simple_string", "simple_int8", "simple_identity", "simple_sequence", "simple_dyna_sequence", "repeat_int32"}
	s := start(t, refserver.Options{Repository: repo, Models: []string{"simple"}})
	c := newClient(t, s, "grpc")
	ctx := ctxT(t)
	idx, err := c.RepositoryIndex(ctx)
	if err != nil || len(idx) != len(repo) {
		t.Fatalf("index of a %d-model repository: %d entries, %v", len(repo), len(idx), err)
	}
	if err := c.LoadModel(ctx, "accumulate"); err == nil || !strings.Contains(err.Error(), "failed to load") {
		t.Errorf("loading a model outside the repository: %v", err)
	}
	if err := loadWithConfig(t, s, "grpc", `{"max_batch_size":"16"}`); err != nil {
		t.Fatal(err)
	}
	if cfg, err := c.ModelConfig(ctx, "simple", ""); err != nil || cfg.MaxBatchSize != 16 {
		t.Errorf("max_batch_size 16 override: %+v %v", cfg, err)
	}
	_, err = stubs(t, s).RepositoryModelLoad(ctx, &inferencepb.RepositoryModelLoadRequest{ModelName: "simple",
		Parameters: map[string]*inferencepb.ModelRepositoryParameter{
			"config":                           {ParameterChoice: &inferencepb.ModelRepositoryParameter_StringParam{StringParam: "{}"}},
			"file:" + strings.Repeat("A", 256): {ParameterChoice: &inferencepb.ModelRepositoryParameter_BytesParam{BytesParam: []byte("a")}},
		}})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "failed to poll from model repository") {
		t.Errorf("load with model files: %v", err)
	}
}
