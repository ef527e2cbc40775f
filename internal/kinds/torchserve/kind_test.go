package torchserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// fakeTS is a TorchServe on an in-memory network: its ping, management
// and metrics answers are scripted per test.
type fakeTS struct {
	mu       sync.Mutex
	ping     func() (int, string)
	describe map[string][]string // model → successive GET /models/{model} bodies (the last repeats)
	metrics  string
	predict  func(w http.ResponseWriter, r *http.Request)
	noMgmt   bool
	noMetric bool
}

func readyDesc(name string) string {
	return fmt.Sprintf(`[{"modelName": %q, "modelVersion": "1.0", "minWorkers": 1, "maxWorkers": 1, "workers": [{"id": "9000", "status": "READY"}]}]`, name)
}

func (f *fakeTS) serve(t *testing.T, mem *memnet.Network) {
	t.Helper()
	inference := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ping":
			status, body := 200, `{"status": "Healthy"}`
			if f.ping != nil {
				status, body = f.ping()
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		case strings.HasPrefix(r.URL.Path, "/predictions/") && f.predict != nil:
			f.predict(w, r)
		default:
			writeError(w, 404, "ResourceNotFoundException", "Requested resource is not found, please refer to API document.")
		}
	})
	mgmt := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.URL.Path == "/models" {
			var names []string
			for n := range f.describe {
				names = append(names, fmt.Sprintf(`{"modelName": %q, "modelUrl": "%s.mar"}`, n, n))
			}
			fmt.Fprintf(w, `{"models": [%s]}`, strings.Join(names, ", "))
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/models/")
		seq, ok := f.describe[name]
		if !ok {
			writeError(w, 404, "ModelNotFoundException", "Model not found: "+name)
			return
		}
		io.WriteString(w, seq[0])
		if len(seq) > 1 {
			f.describe[name] = seq[1:]
		}
	})
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, f.metrics) })
	listen := func(addr string, h http.Handler) {
		ln, err := mem.Listen(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	listen("ts:8080", inference)
	if !f.noMgmt {
		listen("ts:8081", mgmt)
	}
	if !f.noMetric {
		listen("ts:8082", metrics)
	}
}

// tinyPlan is a plan for model tiny at ts:8080 with one JSON request.
func tinyPlan(t *testing.T, options map[string]any) *plan.Plan {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tiny.json")
	if err := os.WriteFile(p, []byte(`{"data": [{"json": [1, 2, 3, 4]}], "validation_data": [{"json": {"output": [1, 2]}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return &plan.Plan{
		Servers: []plan.Server{{Kind: Name, URL: "ts:8080", Protocol: plan.ProtocolHTTP, Timeout: 5 * time.Second, Options: options}},
		Models:  []plan.Model{{Alias: "tiny", Name: "tiny", Input: plan.Input{Kind: "json", Paths: []string{p}}, Validate: true}},
		Points:  []plan.Point{{ID: "tiny/c=1", Model: "tiny", Protocol: plan.ProtocolHTTP, SharedMemory: plan.ShmNone, BatchSize: 1}},
	}
}

// open runs Open against f on the fake clock and network, then fn with
// the server (nil when Open failed) and Open's error.
func open(t *testing.T, f *fakeTS, p *plan.Plan, fn func(t *testing.T, s kinds.Server, err error)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		f.serve(t, &mem)
		s, err := Kind{}.Open(t.Context(), p, kinds.Env{ConnectTimeout: 5 * time.Second, Net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}})
		fn(t, s, err)
		if s != nil {
			s.Close()
		}
	})
}

func wantFailure(t *testing.T, err error, kind failure.Kind, msg string) {
	t.Helper()
	if err == nil || failure.KindOf(err) != kind || !strings.Contains(err.Error(), msg) {
		t.Fatalf("got %v (%v), want %v error containing %q", err, failure.KindOf(err), kind, msg)
	}
}

const tinyMetrics = `# TYPE ts_inference_requests_total counter
ts_inference_requests_total{model_name="tiny",model_version="default",hostname="h",} 4.0
# TYPE ts_inference_latency_microseconds counter
ts_inference_latency_microseconds{model_name="tiny",model_version="default",hostname="h",} 4000.0
# TYPE ts_queue_latency_microseconds counter
ts_queue_latency_microseconds{model_name="tiny",model_version="default",hostname="h",} 1000.0
`

func TestOpenAndMeasure(t *testing.T) {
	f := &fakeTS{describe: map[string][]string{"tiny": {readyDesc("tiny")}}, metrics: tinyMetrics}
	f.predict = func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != ctJSON || string(b) != "[1,2,3,4]" || r.URL.Path != "/predictions/tiny" {
			writeError(w, 503, "InternalServerException", "Prediction failed")
			return
		}
		io.WriteString(w, `{"output": [1.0, 2]}`)
	}
	open(t, f, tinyPlan(t, nil), func(t *testing.T, s kinds.Server, err error) {
		if err != nil {
			t.Fatal(err)
		}
		info := s.Info()
		if info.Name != "torchserve" || info.URL != "http://ts:8080" || strings.Join(info.Extensions, ",") != "management,metrics" {
			t.Errorf("info %+v", info)
		}
		pt, err := s.Point(t.Context(), &plan.Point{ID: "tiny/c=1", Model: "tiny"})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := pt.NewCaller(t.Context(), 0)
		d := pt.Data()
		start := time.Now()
		clock := func() time.Duration { return time.Since(start) }
		var out kinds.Outcome
		c.Call(t.Context(), clock, &kinds.Request{Step: d.Cursor(0, 1).Next(), Check: true}, &out)
		if out.Err != nil || !out.Checked || out.Mismatch != "" {
			t.Errorf("outcome %+v", out)
		}
		st, err := pt.Stats(t.Context())
		if err != nil || st.Inferences != 4 || st.Queue.Ns != 1e6 || st.ComputeInfer.Ns != 3e6 {
			t.Errorf("stats %+v %v", st, err)
		}
	})
}

func TestOpenRefuses(t *testing.T) {
	startingDesc := `[{"modelName": "tiny", "minWorkers": 1, "workers": [{"id": "9000", "status": "STARTING"}]}]`
	tests := []struct {
		name    string
		f       *fakeTS
		options map[string]any
		kind    failure.Kind
		msg     string
	}{
		{name: "unknown model", f: &fakeTS{describe: map[string][]string{"big": {readyDesc("big")}}},
			kind: failure.InvalidInput, msg: `model "tiny" (alias tiny) is not registered at TorchServe http://ts:8081 (registered: big)`},
		{name: "no workers", f: &fakeTS{describe: map[string][]string{"tiny": {`[{"modelName": "tiny", "minWorkers": 0, "workers": []}]`}}},
			kind: failure.InvalidInput, msg: "has no workers at TorchServe http://ts:8081 (minWorkers 0)"},
		{name: "workers never ready", f: &fakeTS{describe: map[string][]string{"tiny": {startingDesc}}},
			kind: failure.Environment, msg: "no worker became READY (workers: STARTING; minWorkers 1)"},
		{name: "never healthy", f: &fakeTS{ping: func() (int, string) { return 500, `{"status": "Unhealthy"}` }},
			kind: failure.Environment, msg: "not ready within 5s: GET /ping answered 500"},
		{name: "management unreachable", f: &fakeTS{noMgmt: true},
			kind: failure.Environment, msg: "management_url: none to skip the model checks"},
		{name: "metrics given but unreachable", f: &fakeTS{noMetric: true, describe: map[string][]string{"tiny": {readyDesc("tiny")}}},
			options: map[string]any{"metrics_url": "ts:9999"}, kind: failure.Environment, msg: "TorchServe metrics API at http://ts:9999"},
		{name: "not torchserve", f: &fakeTS{ping: func() (int, string) { return 404, "no such page" }},
			kind: failure.InvalidInput, msg: "does not answer TorchServe's GET /ping (HTTP 404: no such page)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open(t, tt.f, tinyPlan(t, tt.options), func(t *testing.T, s kinds.Server, err error) {
				wantFailure(t, err, tt.kind, tt.msg)
			})
		})
	}
}

// Workers that are still starting are waited for.
func TestOpenWaitsForWorkers(t *testing.T) {
	starting := `[{"modelName": "tiny", "minWorkers": 1, "workers": [{"id": "9000", "status": "STARTING"}]}]`
	f := &fakeTS{describe: map[string][]string{"tiny": {starting, starting, readyDesc("tiny")}}, noMetric: true}
	open(t, f, tinyPlan(t, nil), func(t *testing.T, s kinds.Server, err error) {
		if err != nil {
			t.Fatal(err)
		}
		if n := s.Notes(); len(n) != 1 || !strings.Contains(n[0], "metrics API not reachable at http://ts:8082") {
			t.Errorf("notes %q", n)
		}
		if info := s.Info(); strings.Join(info.Extensions, ",") != "management" {
			t.Errorf("extensions %v", info.Extensions)
		}
	})
}

// A metrics API without TorchServe's counters (metrics_mode=log) is
// found out once predictions have succeeded and the counters still are
// not there.
func TestStatsWithoutCounters(t *testing.T) {
	f := &fakeTS{describe: map[string][]string{"tiny": {readyDesc("tiny")}}, metrics: "# TYPE up gauge\nup 1\n",
		predict: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"output": [1, 2]}`) }}
	open(t, f, tinyPlan(t, nil), func(t *testing.T, s kinds.Server, err error) {
		if err != nil {
			t.Fatal(err)
		}
		pt, _ := s.Point(t.Context(), &plan.Point{Model: "tiny"})
		if _, err := pt.Stats(t.Context()); err != nil {
			t.Fatalf("before any prediction: %v", err)
		}
		c, _ := pt.NewCaller(t.Context(), 0)
		var out kinds.Outcome
		c.Call(t.Context(), func() time.Duration { return 0 }, &kinds.Request{Step: pt.Data().Cursor(0, 1).Next()}, &out)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		_, err1 := pt.Stats(t.Context())
		_, err2 := pt.Stats(t.Context())
		if err1 != nil || err2 == nil || !strings.Contains(err2.Error(), "has no ts_inference_requests_total after 1 successful predictions") {
			t.Errorf("stats errors %v, %v", err1, err2)
		}
	})
}

// Errors the server answers are server errors; a closed port is a
// transport failure the engine counts as the server unreachable.
func TestCallErrors(t *testing.T) {
	f := &fakeTS{describe: map[string][]string{"tiny": {readyDesc("tiny")}},
		predict: func(w http.ResponseWriter, r *http.Request) {
			writeError(w, 503, "InternalServerException", "Prediction failed")
		}}
	open(t, f, tinyPlan(t, map[string]any{"metrics_url": "none"}), func(t *testing.T, s kinds.Server, err error) {
		if err != nil {
			t.Fatal(err)
		}
		pt, _ := s.Point(t.Context(), &plan.Point{Model: "tiny"})
		if _, err := pt.Stats(t.Context()); !errors.Is(err, kinds.ErrNoStats) {
			t.Errorf("stats with metrics off: %v", err)
		}
		c, _ := pt.NewCaller(t.Context(), 0)
		var out kinds.Outcome
		c.Call(t.Context(), func() time.Duration { return 0 }, &kinds.Request{Step: pt.Data().Cursor(0, 1).Next(), Check: true}, &out)
		var se *transport.ServerError
		if !errors.As(out.Err, &se) || se.HTTPStatus != 503 || se.Message != "InternalServerException: Prediction failed" || out.Checked {
			t.Errorf("outcome %+v", out)
		}
	})
}

func TestCheckPlan(t *testing.T) {
	p := tinyPlan(t, nil)
	p.Models[0].Input = plan.Input{Kind: "random"}
	p.Points[0].Protocol = plan.ProtocolGRPC
	p.Points[0].BatchSize = 4
	p.Points[0].SharedMemory = plan.ShmSystem
	err := checkPlan(p)
	for _, want := range []string{"TorchServe has no model metadata to generate random inputs", "protocol grpc", "batch_size 4", "shared_memory system"} {
		if err == nil || failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// Triton's HTTP port given to the torchserve kind: exit 2, naming the
// kind that fits.
func TestOpenOnTriton(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		tr, err := refserver.New(refserver.Options{Models: []string{"simple"}, HTTPAddr: "ts:8080", GRPCAddr: "-", Listen: mem.Listen, PlainTimers: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		_, err = Kind{}.Open(t.Context(), tinyPlan(t, nil), kinds.Env{Net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}})
		wantFailure(t, err, failure.InvalidInput, "is a KServe v2 server (triton dev, as Triton's HTTP port 8000 is); measure it with kind: kserve")
	})
}
