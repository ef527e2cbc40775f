package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// The client half of issue 11, replayed over both flavours of the
// reference server: Triton's (every extension) and plain KServe v2 (none,
// JSON tensors only, no config/statistics/shared-memory endpoints), the
// latter standing for servers such as MLServer. Each case is one scenario
// run through the launcher, the way `perfscen run` does it, against a
// server reached by its own http_url and grpc_url.

var flavours = []refserver.Flavor{refserver.FlavorTriton, refserver.FlavorKServe}

// runScenario starts a server of the flavour and runs body (the scenario
// without its server section) against it.
func runScenario(t *testing.T, f refserver.Flavor, server, body string) (*result.Run, *refserver.Server, error) {
	t.Helper()
	srv := start(t, refserver.Options{Flavor: f})
	yaml := fmt.Sprintf("version: 1\nserver:\n  http_url: http://%s\n  grpc_url: %s\n  timeout: 10s\n%s%s",
		srv.HTTPAddr(), srv.GRPCAddr(), server, body)
	s, err := scenario.Parse(string(f)+".yaml", []byte(yaml), func(string) string { return "" })
	if err != nil {
		t.Fatalf("scenario:\n%s\n%v", yaml, err)
	}
	p, err := scenario.Expand(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, err := runner.Run(ctx, p, runner.Options{ConnectTimeout: 5 * time.Second})
	return run, srv, err
}

// C1, C2, C5: with the defaults, HTTP and gRPC points measure both
// flavours without a failed request: INT32 and FP16 tensors (binary where
// the server has the extension, JSON where not), batch 2 on a model whose
// batch dimension the plain server only states as a leading -1.
func TestDefaultsMeasureBothFlavours(t *testing.T) {
	const body = `models:
  - name: simple
    batch_size: 2
  - name: identity_fp16
    shapes: {INPUT0: [8]}
sweep:
  protocol: [http, grpc]
load: {mode: iterations, iterations: 20}
`
	for _, f := range flavours {
		t.Run(string(f), func(t *testing.T) {
			run, srv, err := runScenario(t, f, "", body)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Points) != 4 {
				t.Fatalf("%d points, want 4", len(run.Points))
			}
			for _, p := range run.Points {
				if p.Summary.Requests != 20 || p.Errors.Count != 0 {
					t.Errorf("%s: %d requests, %d errors %v; want 20 and none", p.ID, p.Summary.Requests, p.Errors.Count, p.Errors.First)
				}
			}
			// Throughput counts samples: the server saw batch 2 requests.
			for _, st := range srv.Statistics() {
				if st.Name == "simple" && st.InferenceCount != 2*st.Success.Count {
					t.Errorf("simple: %d inferences in %d requests, want batch 2", st.InferenceCount, st.Success.Count)
				}
			}
			plain := f == refserver.FlavorKServe
			if got := len(run.Environment.Server.Extensions) == 0; got != plain {
				t.Errorf("extensions %v recorded for flavour %s", run.Environment.Server.Extensions, f)
			}
			if hasNote := strings.Contains(strings.Join(run.Notes, "\n"), "statistics"); hasNote != plain {
				t.Errorf("notes %q for flavour %s", run.Notes, f)
			}
		})
	}
}

// C1: tensor_format json sends FP16 as JSON numbers where the server has
// no binary form; where it has (Triton), FP16 outputs cannot come back as
// JSON, so the run is refused before load instead of failing every
// request. binary is refused up front where the extension is missing.
func TestTensorFormatOverFlavours(t *testing.T) {
	const body = "models: [{name: identity_fp16, shapes: {INPUT0: [4]}}]\nload: {mode: iterations, iterations: 10}\n"
	const json = "  tensor_format: json\n"
	run, _, err := runScenario(t, refserver.FlavorKServe, json, body)
	if err != nil || run.Points[0].Errors.Count != 0 {
		t.Fatalf("kserve/json: err %v", err)
	}
	_, srv, err := runScenario(t, refserver.FlavorTriton, json, body)
	if err == nil || !strings.Contains(err.Error(), "output OUTPUT0 is FP16") {
		t.Fatalf("triton/json with an FP16 output: err %v, want one naming the output", err)
	}
	wantNoRequests(t, srv)
	run, _, err = runScenario(t, refserver.FlavorTriton, json, strings.Replace(body, "identity_fp16", "identity_fp32", 1))
	if err != nil || run.Points[0].Errors.Count != 0 {
		t.Fatalf("triton/json FP32: err %v", err)
	}
	run, _, err = runScenario(t, refserver.FlavorTriton, "  tensor_format: binary\n", body)
	if err != nil || run.Points[0].Errors.Count != 0 {
		t.Fatalf("triton/binary: err %v", err)
	}
	_, srv, err = runScenario(t, refserver.FlavorKServe, "  tensor_format: binary\n", body)
	wantRefusedBeforeLoad(t, srv, err, "binary_tensor_data")
}

// C3, C4: a check on server statistics or shared-memory points needs the
// extension; on the plain flavour the run stops with exit 2 naming it
// before any request, on Triton's it measures.
func TestMissingExtensionIsFoundBeforeLoad(t *testing.T) {
	cases := []struct{ name, body, ext string }{
		{"statistics", "models: [{name: simple}]\nload: {mode: iterations, iterations: 10}\nthresholds: [\"server_queue < 1s\"]\n", "statistics"},
		{"system shm", "models: [{name: simple}]\nload: {mode: iterations, iterations: 10, shared_memory: system}\n", "system_shared_memory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, _, err := runScenario(t, refserver.FlavorTriton, "", tc.body)
			if err != nil || run.Points[0].Errors.Count != 0 {
				t.Fatalf("triton: err %v", err)
			}
			if tc.ext == "statistics" && run.Points[0].Summary.Server == nil {
				t.Error("triton: no server statistics measured")
			}
			_, srv, err := runScenario(t, refserver.FlavorKServe, "", tc.body)
			wantRefusedBeforeLoad(t, srv, err, tc.ext)
		})
	}
}

func wantRefusedBeforeLoad(t *testing.T, srv *refserver.Server, err error, ext string) {
	t.Helper()
	if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "needs the "+ext+" extension") {
		t.Fatalf("err = %v (%s), want invalid input naming %s", err, failure.KindOf(err), ext)
	}
	wantNoRequests(t, srv)
}

func wantNoRequests(t *testing.T, srv *refserver.Server) {
	t.Helper()
	for _, st := range srv.Statistics() {
		if st.Success.Count+st.Fail.Count != 0 {
			t.Errorf("%s received %d requests before the refusal", st.Name, st.Success.Count+st.Fail.Count)
		}
	}
}
