//go:build linux

package tritoncapi_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds/tritoncapi"
	"github.com/perfscen/perfscen/internal/tritontest"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// The Triton folder and a writable copy of its model repository, with a
// broken model and a model that fails to load beside the shipped ones.
var (
	triDir string
	repo   string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if lib := os.Getenv(fakeLibEnv); lib != "" {
		return fakeLibChild(lib)
	}
	triDir = tritontest.Dir()
	if triDir == "" {
		fmt.Println(tritontest.SkipLine("internal/kinds/tritoncapi (the C API kind against the real library)"))
	} else {
		tmp, err := os.MkdirTemp("", "perfscen-capi-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		repo = filepath.Join(tmp, "models")
		if err := tritontest.CopyRepo(triDir, repo); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := addBadModels(repo); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	// Every in-process server, request and output buffer was given back.
	if err := tritoncapi.Leaks(); err != nil {
		fmt.Fprintln(os.Stderr, "after the tests:", err)
		code = 1
	}
	return code
}

// addBadModels writes a model whose config does not parse and a Python
// model whose initialize raises.
func addBadModels(repo string) error {
	if err := os.MkdirAll(filepath.Join(repo, "broken_config", "1"), 0o755); err != nil {
		return err
	}
	cfg := "name: \"broken_config\"\nbackend: \"identity\"\nmax_batch_size: 8\n" +
		"input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ 16 ] } ]\n" +
		"output [ { name: \"OUTPUT0\" data_type: TYPE_NOPE dims: [ 16 ] } ]\n"
	if err := os.WriteFile(filepath.Join(repo, "broken_config", "config.pbtxt"), []byte(cfg), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(repo, "fails_to_load", "1"), 0o755); err != nil {
		return err
	}
	cfg = "name: \"fails_to_load\"\nbackend: \"python\"\nmax_batch_size: 8\n" +
		"input [ { name: \"INPUT0\" data_type: TYPE_FP32 dims: [ 16 ] } ]\n" +
		"output [ { name: \"OUTPUT0\" data_type: TYPE_FP32 dims: [ 16 ] } ]\n" +
		"instance_group [ { kind: KIND_CPU count: 1 } ]\n"
	if err := os.WriteFile(filepath.Join(repo, "fails_to_load", "config.pbtxt"), []byte(cfg), 0o644); err != nil {
		return err
	}
	py := "class TritonPythonModel:\n    def initialize(self, args):\n        raise RuntimeError('perfscen test: this model refuses to load')\n" +
		"    def execute(self, requests):\n        return []\n"
	return os.WriteFile(filepath.Join(repo, "fails_to_load", "1", "model.py"), []byte(py), 0o644)
}

func needTriton(t *testing.T) {
	t.Helper()
	if triDir == "" {
		t.Skip(tritontest.SkipLine("this test"))
	}
}

func checkLeaks(t *testing.T) {
	t.Helper()
	existing := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, existing)
		if err := tritoncapi.Leaks(); err != nil {
			t.Error(err)
		}
	})
}

// runScenario writes body (with {{LIB}}, {{REPO}} and {{BACKENDS}}
// replaced) and runs it in this process.
func runScenario(t *testing.T, ctx context.Context, body string, files map[string]string, opts ...runner.Options) (*result.Run, error) {
	t.Helper()
	dir := t.TempDir()
	lib, backends := "", ""
	if triDir != "" {
		lib, backends = tritontest.Library(triDir), tritontest.Backends(triDir)
	}
	body = strings.NewReplacer("{{LIB}}", lib, "{{REPO}}", repo, "{{BACKENDS}}", backends).Replace(body)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenario.LoadPlan(path, os.Getenv)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	var o runner.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	return runner.Run(ctx, p, o)
}

const server = `server:
  kind: triton_c_api
  timeout: 30s
  triton_c_api:
    library: {{LIB}}
    model_repository: {{REPO}}
`

var identityData = `{"data": [{"INPUT0": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16.5]}],
 "validation_data": [{"OUTPUT0": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16.5]}]}`

var sequenceData = `{"data": [[{"INPUT": [1]}, {"INPUT": [2]}, {"INPUT": [3]}], [{"INPUT": [10]}, {"INPUT": [20]}]],
 "validation_data": [[{"OUTPUT": [1]}, {"OUTPUT": [3]}, {"OUTPUT": [6]}], [{"OUTPUT": [10]}, {"OUTPUT": [30]}]]}`

var repeatData = `{"data": [{"IN": {"content": [1, 2, 3], "shape": [3]}, "DELAY": {"content": [0, 0, 0], "shape": [3]},
 "WAIT": {"content": [0], "shape": [1]}}]}`

// Every load mode through the C API: concurrency and request rate (time
// windows) and iterations, batch sizes up to the config's limit, outputs
// validated, a sequence model's running sums, a decoupled model's
// responses, and the server's own breakdown of the measured requests.
// Afterwards the server is deleted and nothing Triton handed out is left.
func TestRunEveryMode(t *testing.T) {
	needTriton(t)
	checkLeaks(t)
	run, err := runScenario(t, context.Background(), `version: 1
name: capi-modes
`+server+`models:
  - name: identity_fp32
    input_data: identity.json
    validate_outputs: true
  - name: accumulate_sequence
    sequence: true
    input_data: seq.json
    validate_outputs: true
  - name: repeat_int32
    input_data: repeat.json
load:
  mode: iterations
  iterations: 60
  warmup_iterations: 6
sweep:
  concurrency: [1, 4]
thresholds:
  - errors == 0
`, map[string]string{"identity.json": identityData, "seq.json": sequenceData, "repeat.json": repeatData})
	if err != nil {
		t.Fatal(err)
	}
	if srv := run.Environment.Server; !srv.InProcess || srv.Version != "2.46.0" {
		t.Errorf("server recorded as %+v", srv)
	}
	for _, p := range run.Points {
		if p.Summary.Requests != 60 || p.Errors.Count != 0 {
			t.Errorf("%s: %d requests, errors %+v", p.ID, p.Summary.Requests, p.Errors)
		}
		if s := p.Summary.Server; s == nil || s.RequestCount != 60 || s.ComputeInferUs <= 0 {
			t.Errorf("%s: server figures %+v", p.ID, s)
		}
		switch p.ModelName {
		case "identity_fp32", "accumulate_sequence":
			if p.Validation.Checked != 60 || p.Validation.Mismatches != 0 {
				t.Errorf("%s: validation %+v", p.ID, p.Validation)
			}
		case "repeat_int32":
			if p.Summary.Responses != 180 || p.Summary.FirstResponseAvgUs <= 0 {
				t.Errorf("%s: %d responses (want 3 per request), first response %v us", p.ID, p.Summary.Responses, p.Summary.FirstResponseAvgUs)
			}
		}
	}

}

// Request rate, batch 8 (the model's max_batch_size) and concurrency in
// time windows.
func TestRunWindows(t *testing.T) {
	needTriton(t)
	checkLeaks(t)
	run, err := runScenario(t, context.Background(), `version: 1
name: capi-windows
`+server+`models:
  - name: identity_fp32
    batch_size: 8
load:
  mode: request_rate
sweep:
  request_rate: [200]
measurement:
  window: 200ms
  warmup: 100ms
  stability: 50%
  max_trials: 6
  trials: 3
  allow_unstable: true
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := run.Points[0]
	if p.Errors.Count != 0 || p.Summary.Requests == 0 || p.Summary.Server == nil {
		t.Fatalf("%s: %+v", p.ID, p.Summary)
	}
	// Every request carries 8 inferences. The server's figures are the
	// differences of its statistics read at each window's edges, and the
	// backend reports a request's statistics and its batch's at two
	// moments, both after sending the response the client already has: a
	// request read between them at an edge lands in one count and not the
	// other (seen once in about ten package runs under -race). Allow one
	// such request at each edge of each kept window.
	srv := p.Summary.Server
	slack := int64(8 * 2 * len(p.Trials))
	if d := srv.InferenceCount - 8*srv.RequestCount; d < -slack || d > slack || srv.InferenceCount%8 != 0 {
		t.Errorf("%s: %d inferences in %d requests over %d windows, want 8 a request", p.ID, srv.InferenceCount, srv.RequestCount, len(p.Trials))
	}
}

// What a user gets wrong is exit 2 before any load, naming what was
// wrong; Triton's own reason is quoted where it gave one.
func TestBadInput(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "libtritonserver.so")
	if err := os.WriteFile(notELF, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyDir := t.TempDir()
	cases := []struct {
		name, srv, model string
		triton           bool // needs the real library
		want             []string
	}{
		{name: "no library", srv: "    library: /nonexistent/libtritonserver.so\n    model_repository: " + emptyDir + "\n",
			model: "identity_fp32", want: []string{"server.triton_c_api.library", "/nonexistent/libtritonserver.so"}},
		{name: "not a library", srv: "    library: " + notELF + "\n    model_repository: " + emptyDir + "\n",
			model: "identity_fp32", want: []string{"server.triton_c_api.library", notELF}},
		{name: "no repository", srv: "    library: " + notELF + "\n    model_repository: /nonexistent/models\n",
			model: "identity_fp32", want: []string{"server.triton_c_api.model_repository", "/nonexistent/models"}},
		{name: "not Triton", triton: true, srv: "    library: {{PROTO}}\n    model_repository: {{REPO}}\n",
			model: "identity_fp32", want: []string{"is not Triton's C API library", "libtritonproto.so"}},
		{name: "broken model", triton: true, srv: "    library: {{LIB}}\n    model_repository: {{REPO}}\n",
			model: "broken_config", want: []string{`model "broken_config"`, "failed to load 'broken_config'"}},
		{name: "model fails to load", triton: true, srv: "    library: {{LIB}}\n    model_repository: {{REPO}}\n",
			model: "fails_to_load", want: []string{`model "fails_to_load"`, "this model refuses to load"}},
		{name: "backend missing", triton: true, srv: "    library: {{LIB}}\n    model_repository: {{REPO}}\n    backend_directory: " + emptyDir + "\n",
			model: "identity_fp32", want: []string{`model "identity_fp32"`, "unable to find backend library for backend 'identity'"}},
		{name: "unknown model", triton: true, srv: "    library: {{LIB}}\n    model_repository: {{REPO}}\n",
			model: "nosuch", want: []string{`model "nosuch"`, "identity_fp32"}},
		{name: "sequence model without sequence", triton: true, srv: "    library: {{LIB}}\n    model_repository: {{REPO}}\n",
			model: "simple_sequence", want: []string{"sequence: true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.triton {
				needTriton(t)
			}
			checkLeaks(t)
			srv := strings.ReplaceAll(c.srv, "{{PROTO}}", filepath.Join(triDir, "lib", "libtritonproto.so"))
			_, err := runScenario(t, context.Background(), `version: 1
name: bad
server:
  kind: triton_c_api
  triton_c_api:
`+srv+`models:
  - name: `+c.model+`
load:
  mode: iterations
  iterations: 2
`, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if k := failure.KindOf(err); k != failure.InvalidInput {
				t.Errorf("error kind %v, want invalid input (exit 2): %v", k, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
		})
	}
}

// An interrupt mid-run ends the run with the server stopped and deleted
// and every request released.
func TestInterrupt(t *testing.T) {
	needTriton(t)
	checkLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupted once the first window of load closed.
	stop := runner.Options{Progress: func(e runner.Event) {
		if e.Kind == runner.WindowDone {
			cancel()
		}
	}}
	run, err := runScenario(t, ctx, `version: 1
name: capi-interrupt
`+server+`models:
  - name: identity_fp32
sweep:
  concurrency: [4]
measurement:
  window: 300ms
  max_trials: 50
`, nil, stop)
	if err != nil && run == nil {
		t.Fatal(err)
	}
	if run.Status != result.StatusInterrupted {
		t.Errorf("status %s, want interrupted", run.Status)
	}
}

// Requests that time out are abandoned while Triton still holds them:
// their late responses and output buffers are given back when they come
// (checkLeaks fails the test on any left), whichever build made the
// callbacks.
func TestTimeoutReapsLateResponses(t *testing.T) {
	needTriton(t)
	checkLeaks(t)
	run, err := runScenario(t, context.Background(), `version: 1
name: capi-timeout
server:
  kind: triton_c_api
  timeout: 1ms
  triton_c_api:
    library: {{LIB}}
    model_repository: {{REPO}}
models:
  - name: delay_fp32
load:
  mode: iterations
  iterations: 6
  warmup_iterations: 0
sweep:
  concurrency: [2]
`, nil)
	if err != nil && run == nil {
		t.Fatal(err)
	}
	if len(run.Points) != 1 || run.Points[0].Errors.Count == 0 {
		t.Fatalf("points %+v: want one point whose requests timed out", run.Points)
	}
}
