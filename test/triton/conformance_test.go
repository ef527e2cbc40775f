//go:build linux

package triton

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/cuda"
	"github.com/perfscen/perfscen/runner/plan"
)

// server is the scenario block reaching the test's Triton on both
// protocols.
const server = `server:
  http_url: {{HTTP}}
  grpc_url: {{GRPC}}
  timeout: 30s
`

// simpleData feeds Triton's add/sub example with two steps and their
// expected outputs.
var simpleData = fmt.Sprintf(`{"data": [
  {"INPUT0": %s, "INPUT1": %s},
  {"INPUT0": %s, "INPUT1": %s}],
 "validation_data": [
  {"OUTPUT0": %s, "OUTPUT1": %s},
  {"OUTPUT0": %s, "OUTPUT1": %s}]}`,
	ints(16, 0, 1), ints(16, 1, 0), ints(16, 5, 0), ints(16, 2, 1),
	ints(16, 1, 1), ints(16, -1, 1), ints(16, 7, 1), ints(16, 3, -1))

// identityData is one FP32 [16] step for the identity models, expected back.
var identityData = fmt.Sprintf(`{"data": [{"INPUT0": %[1]s}], "validation_data": [{"OUTPUT0": %[1]s}]}`,
	"[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, -15.25]")

// HTTP (binary and JSON tensors) and gRPC, with outputs validated and the
// server's own breakdown of exactly the measured requests.
func TestConformanceTensors(t *testing.T) {
	for _, format := range []string{"binary", "json"} {
		t.Run(format, func(t *testing.T) {
			o := runScenario(t, `version: 1
name: tensors
`+server+`  tensor_format: `+format+`
models:
  - name: simple
    input_data: simple.json
    validate_outputs: true
  - name: identity_fp32
    input_data: identity.json
    validate_outputs: true
load:
  mode: iterations
  iterations: 40
  warmup_iterations: 4
sweep:
  concurrency: [2]
  protocol: [http, grpc]
thresholds:
  - errors == 0
`, map[string]string{"simple.json": simpleData, "identity.json": identityData})
			o.wantCode(t, 0)
			for _, m := range []string{"simple", "identity_fp32"} {
				for _, proto := range []string{"http", "grpc"} {
					wantClean(t, o.point(t, m+"/c=2,proto="+proto), 40, true)
				}
			}
			if o.res.Environment.Server.Version != "2.46.0" {
				t.Errorf("server recorded as %+v", o.res.Environment.Server)
			}
		})
	}
}

// System shared memory on both protocols, with and without warm-up
// iterations (the warm-up's regions are reused by the measured session):
// a validated model and a 4.9 MB variable-length output sized from one
// reply. Nothing stays registered or in /dev/shm.
func TestConformanceSharedMemory(t *testing.T) {
	for _, warm := range []int{0, 5} {
		t.Run(fmt.Sprintf("warmup=%d", warm), func(t *testing.T) {
			o := runScenario(t, fmt.Sprintf(`version: 1
name: shm
`+server+`models:
  - name: simple
    input_data: simple.json
    validate_outputs: true
  - name: identity_int32
    shapes: {INPUT0: [1228800]}
load:
  mode: iterations
  iterations: 20
  warmup_iterations: %d
  shared_memory: system
sweep:
  concurrency: [2]
  protocol: [http, grpc]
thresholds:
  - errors == 0
`, warm), map[string]string{"simple.json": simpleData})
			o.wantCode(t, 0)
			for _, m := range []string{"simple", "identity_int32"} {
				for _, proto := range []string{"http", "grpc"} {
					wantClean(t, o.point(t, m+"/c=2,proto="+proto), 20, m == "simple")
				}
			}
			noRegionsLeft(t, o)
		})
	}
}

// Time windows (concurrency and request rate) with shared memory and a
// warm-up time, and the metrics endpoint scraped throughout.
func TestConformanceWindowsAndMetrics(t *testing.T) {
	o := runScenario(t, `version: 1
name: windows
`+server+`  metrics_url: http://{{METRICS}}/metrics
models:
  - name: identity_fp32
    input_data: identity.json
    validate_outputs: true
load:
  mode: concurrency
  shared_memory: system
sweep:
  concurrency: [2]
  protocol: [http, grpc]
measurement:
  window: 300ms
  warmup: 200ms
  stability: 50%
  max_trials: 6
  trials: 3
  allow_unstable: true
thresholds:
  - errors == 0
`, map[string]string{"identity.json": identityData})
	o.wantCode(t, 0)
	for _, p := range o.res.Points {
		if p.Errors.Count != 0 || p.Summary.Requests == 0 || p.Validation.Mismatches != 0 || p.Summary.Server == nil {
			t.Errorf("%s: %+v", p.ID, p.Summary)
		}
	}
	for _, n := range o.res.Notes {
		if strings.Contains(n, "metrics") {
			t.Errorf("scraping the metrics port failed: %s", n)
		}
	}
	noRegionsLeft(t, o)

	// The same scenario scraping a URL with no metrics says so: the
	// scrape above did happen.
	bad := runScenario(t, `version: 1
name: windows-bad-metrics
`+server+`  metrics_url: http://{{HTTP}}/metrics
models:
  - name: identity_fp32
load:
  mode: iterations
  iterations: 20
`, nil)
	bad.wantCode(t, 0)
	if !strings.Contains(strings.Join(bad.res.Notes, "\n"), "metrics") {
		t.Errorf("a metrics_url answering 404 left no note: %q", bad.res.Notes)
	}

	rate := runScenario(t, `version: 1
name: rate
`+server+`models:
  - name: identity_fp32
load:
  mode: request_rate
  shared_memory: system
sweep:
  request_rate: [100]
  protocol: [grpc]
measurement:
  window: 300ms
  warmup: 200ms
  stability: 50%
  max_trials: 6
  trials: 3
  allow_unstable: true
thresholds:
  - errors == 0
`, nil)
	rate.wantCode(t, 0)
	noRegionsLeft(t, rate)
}

// Both sequence models, over HTTP, unary gRPC and the gRPC stream: each
// stream of the input data is one sequence, and the running sum checks
// that Triton kept each sequence's state (start, end, correlation ids).
func TestConformanceSequences(t *testing.T) {
	seqData := `{"data": [
  [{"INPUT": [1]}, {"INPUT": [2]}, {"INPUT": [3]}],
  [{"INPUT": [10]}, {"INPUT": [20]}]],
 "validation_data": [
  [{"OUTPUT": [1]}, {"OUTPUT": [3]}, {"OUTPUT": [6]}],
  [{"OUTPUT": [10]}, {"OUTPUT": [30]}]]}`
	// simple_sequence: OUTPUT = INPUT + START while READY.
	simpleSeq := `{"data": [
  [{"INPUT": [5]}, {"INPUT": [6]}, {"INPUT": [7]}]],
 "validation_data": [
  [{"OUTPUT": [6]}, {"OUTPUT": [6]}, {"OUTPUT": [7]}]]}`
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			protos := "[http, grpc]"
			if streaming {
				protos = "[grpc]"
			}
			o := runScenario(t, fmt.Sprintf(`version: 1
name: sequences
`+server+`models:
  - name: accumulate_sequence
    sequence: true
    input_data: acc.json
    validate_outputs: true
  - name: simple_sequence
    sequence: true
    input_data: simple_seq.json
    validate_outputs: true
load:
  mode: iterations
  iterations: 30
  warmup_iterations: 5
  streaming: %v
sweep:
  concurrency: [2]
  protocol: %s
thresholds:
  - errors == 0
`, streaming, protos), map[string]string{"acc.json": seqData, "simple_seq.json": simpleSeq})
			o.wantCode(t, 0)
			for _, p := range o.res.Points {
				if p.Summary.Requests != 30 || p.Errors.Count != 0 || p.Validation.Checked != 30 || p.Validation.Mismatches != 0 {
					t.Errorf("%s: requests %d, errors %+v, validation %+v", p.ID, p.Summary.Requests, p.Errors, p.Validation)
				}
			}
		})
	}
}

// The decoupled repeat model over the gRPC stream: one request, one
// response per element of IN, the request complete at the final one.
func TestConformanceDecoupled(t *testing.T) {
	o := runScenario(t, `version: 1
name: decoupled
`+server+`  protocol: grpc
models:
  - name: repeat_int32
    input_data: repeat.json
load:
  mode: iterations
  iterations: 20
  streaming: true
sweep:
  concurrency: [2]
thresholds:
  - errors == 0
`, map[string]string{"repeat.json": `{"data": [
  {"IN": {"content": [1, 2, 3, 4], "shape": [4]},
   "DELAY": {"content": [1, 1, 1, 1], "shape": [4]},
   "WAIT": {"content": [1], "shape": [1]}}]}`})
	o.wantCode(t, 0)
	p := o.point(t, "repeat_int32/c=2")
	if p.Summary.Requests != 20 || p.Summary.Responses != 80 || p.Summary.FirstResponseAvgUs <= 0 {
		t.Errorf("requests %d, responses %d (want 80), first response %v us", p.Summary.Requests, p.Summary.Responses, p.Summary.FirstResponseAvgUs)
	}

	// Without the stream Triton refuses a decoupled model on every
	// request: the point could not be measured.
	unary := runScenario(t, `version: 1
name: decoupled-unary
`+server+`  protocol: grpc
models:
  - name: repeat_int32
    input_data: repeat.json
load:
  mode: iterations
  iterations: 5
`, map[string]string{"repeat.json": `{"data": [
  {"IN": {"content": [1], "shape": [1]}, "DELAY": {"content": [0], "shape": [1]}, "WAIT": {"content": [0], "shape": [1]}}]}`})
	unary.wantCode(t, 3)
	if !strings.Contains(unary.out, "decoupled") {
		t.Errorf("the refusal does not quote Triton's reason:\n%s", unary.out)
	}
}

// Dynamic batching from the edited repository copy: delay_fp32 sleeps
// delayMs per execution, so eight concurrent requests share executions
// and each waits at least one delay.
func TestConformanceDynamicBatching(t *testing.T) {
	o := runScenario(t, `version: 1
name: batching
`+server+`  protocol: grpc
models:
  - name: delay_fp32
load:
  mode: iterations
  iterations: 64
  warmup_iterations: 8
sweep:
  concurrency: [8]
thresholds:
  - errors == 0
`, nil)
	o.wantCode(t, 0)
	p := o.point(t, "delay_fp32/c=8")
	s := p.Summary.Server
	if s == nil || s.InferenceCount != 64 || s.ExecutionCount >= 32 {
		t.Fatalf("server figures %+v: want 64 inferences in fewer than 32 executions", s)
	}
	if p.Summary.P50Us < delayMs*1000 || s.ComputeInferUs < delayMs*1000 {
		t.Errorf("p50 %v us, compute %v us: below the edited delay_ms of %d", p.Summary.P50Us, s.ComputeInferUs, delayMs)
	}
}

// Batch sizes up to the model's max_batch_size (8, read from its config)
// are measured as that many inferences per request; one more is refused
// before any load.
func TestConformanceBatchSizes(t *testing.T) {
	o := runScenario(t, `version: 1
name: batches
`+server+`models:
  - name: identity_fp32
load:
  mode: iterations
  iterations: 10
sweep:
  batch_size: [1, 8]
  protocol: [http, grpc]
thresholds:
  - errors == 0
`, nil)
	o.wantCode(t, 0)
	for _, proto := range []string{"http", "grpc"} {
		p := o.point(t, "identity_fp32/c=1,b=8,proto="+proto)
		if s := p.Summary.Server; s == nil || s.InferenceCount != 80 || s.RequestCount != 10 {
			t.Errorf("%s: server figures %+v, want 10 requests of 8 inferences", p.ID, s)
		}
	}
	over := runScenario(t, `version: 1
name: batches-over
`+server+`models:
  - name: identity_fp32
    batch_size: 9
load:
  mode: iterations
  iterations: 5
`, nil)
	over.wantCode(t, 2)
	if !strings.Contains(over.out, "8") {
		t.Errorf("the refusal does not say the limit:\n%s", over.out)
	}
}

// What a user gets wrong, against the real server: each is exit 2 before
// any load, naming what was wrong.
func TestConformanceInvalidInput(t *testing.T) {
	cases := []struct {
		name, models string
		files        map[string]string
		want         string
	}{
		// Triton answers 404 (HTTP) / NotFound (gRPC) for a model it
		// does not have.
		{"unknown model http", "  - name: nosuch\n", nil, "nosuch"},
		{"wrong shape", "  - name: identity_fp32\n    shapes: {INPUT0: [15]}\n", nil, "INPUT0"},
		{"wrong dtype", "  - name: simple\n    input_data: bad.json\n",
			map[string]string{"bad.json": `{"data": [{"INPUT0": ["a", "b"], "INPUT1": [1]}]}`}, "INPUT0"},
		{"wrong input name", "  - name: simple\n    input_data: bad.json\n",
			map[string]string{"bad.json": fmt.Sprintf(`{"data": [{"INPUTX": %s, "INPUT1": %s}]}`, ints(16, 0, 0), ints(16, 0, 0))}, "INPUT"},
	}
	for _, c := range cases {
		for _, proto := range []string{"http", "grpc"} {
			t.Run(c.name+"/"+proto, func(t *testing.T) {
				o := runScenario(t, `version: 1
name: invalid
`+server+`  protocol: `+proto+`
models:
`+c.models+`load:
  mode: iterations
  iterations: 5
`, c.files)
				o.wantCode(t, 2)
				if !strings.Contains(o.out, c.want) {
					t.Errorf("output does not name %q:\n%s", c.want, o.out)
				}
			})
		}
	}
}

// Model control in explicit mode, through perfscen's client on both
// protocols and a config override: an unloaded model is one the server
// lacks (exit 2), a reloaded one is measured again, and an override's
// max_batch_size is the limit perfscen reads from the config.
func TestConformanceModelControl(t *testing.T) {
	run := func(batch int) outcome {
		return runScenario(t, fmt.Sprintf(`version: 1
name: control
`+server+`models:
  - name: %s
    batch_size: %d
load:
  mode: iterations
  iterations: 5
`, ctlModel, batch), nil)
	}
	for _, proto := range []plan.Protocol{plan.ProtocolHTTP, plan.ProtocolGRPC} {
		c := tritonClient(t, proto)
		if err := c.UnloadModel(ctxT(t), ctlModel); err != nil {
			t.Fatalf("%s unload: %v", proto, err)
		}
		if ready, err := c.ModelReady(ctxT(t), ctlModel, ""); err != nil || ready {
			t.Fatalf("%s: ready %v after unload (%v)", proto, ready, err)
		}
		o := run(1)
		o.wantCode(t, 2)
		if !strings.Contains(o.out, ctlModel) {
			t.Errorf("the refusal does not name the model:\n%s", o.out)
		}
		if err := c.LoadModel(ctxT(t), ctlModel); err != nil {
			t.Fatalf("%s load: %v", proto, err)
		}
		run(8).wantCode(t, 0)
	}

	// A full config override (Triton replaces the config) with a smaller
	// max_batch_size: batch 8 is now refused before load, 4 is measured.
	override := `{"parameters":{"config":"{\"name\":\"` + ctlModel + `\",\"backend\":\"identity\",\"max_batch_size\":4,` +
		`\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[16]}],` +
		`\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_FP32\",\"dims\":[16]}]}"}}`
	if st, _, b := httpDo(t, tri.HTTP, "POST", "/v2/repository/models/"+ctlModel+"/load", override); st != 200 {
		t.Fatalf("load with override: %d %s", st, b)
	}
	cfg, err := tritonClient(t, plan.ProtocolGRPC).ModelConfig(ctxT(t), ctlModel, "")
	if err != nil || cfg.MaxBatchSize != 4 {
		t.Fatalf("config after the override: %+v, %v", cfg, err)
	}
	run(8).wantCode(t, 2)
	run(4).wantCode(t, 0)
}

// shared_memory: cuda on a machine without the CUDA runtime or a GPU
// (this one, when cuda.Load fails): exit 2 before any load, saying what is
// missing, on both protocols.
func TestConformanceCUDASharedMemoryUnavailable(t *testing.T) {
	if _, err := cuda.Load(); err == nil {
		t.Skip("this machine has CUDA: CUDA shared memory is exercised against a GPU build of Triton, not this CPU one")
	}
	for _, proto := range []string{"http", "grpc"} {
		o := runScenario(t, `version: 1
name: cuda-shm
`+server+`  protocol: `+proto+`
models:
  - name: simple
load:
  mode: iterations
  iterations: 5
  shared_memory: cuda
`, nil)
		o.wantCode(t, 2)
		if !strings.Contains(o.out, "libcudart") {
			t.Errorf("%s: the refusal does not name the CUDA runtime:\n%s", proto, o.out)
		}
	}
}
