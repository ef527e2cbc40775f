package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
)

// proxyTo forwards to the HTTP endpoint of srv.
func proxyTo(srv *refserver.Server) *httputil.ReverseProxy {
	return httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: srv.HTTPAddr()})
}

// slowLoris answers health, metadata and statistics at once, so the run
// starts, but sends each inference response one byte every 20 ms after its
// headers: a response that never finishes within any sane timeout.
func slowLoris(t *testing.T, backend *refserver.Server) *httptest.Server {
	proxy := proxyTo(backend)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/infer") {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		body := rec.Body.Bytes()
		for i := range body {
			if _, err := w.Write(body[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// Responses dribbled byte by byte: the request timeout covers the body
// too, so each one ends as a counted timeout and the run ends instead of
// waiting on the socket.
func TestFaultSlowLorisResponses(t *testing.T) {
	backend := startServer(t, refserver.Options{})
	front := slowLoris(t, backend)
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: slowloris
server:
  url: `+strings.TrimPrefix(front.URL, "http://")+`
  protocol: http
  timeout: 300ms
models:
  - name: simple
sweep:
  concurrency: [2]
measurement:
  window: 200ms
  max_trials: 3
  allow_unstable: true
thresholds:
  - error_rate <= 1%
`)
	out := filepath.Join(dir, "r.json")
	r := runFault(t, context.Background(), "run", sc, "-q", "--out", out)
	if r.code != exitcode.Environment && r.code != exitcode.CheckFailed {
		t.Fatalf("want exit 3 or 1, got %s", r)
	}
	if limit := 300*time.Millisecond + 3*200*time.Millisecond + 4*time.Second; r.elapsed > limit {
		t.Errorf("run took %s, want under %s", r.elapsed, limit)
	}
	res := readResult(t, out)
	if pointErrors(res) == 0 {
		t.Fatalf("no timeouts counted:\n%s", r)
	}
	first := strings.ToLower(strings.Join(res.Points[0].Errors.First, "\n"))
	if !strings.Contains(first, "deadline") && !strings.Contains(first, "timeout") {
		t.Errorf("first errors do not name the timeout:\n%s", first)
	}
}

// restartingProxy sends everything to a until the n-th statistics request
// has been answered, then to b: the server "restarted" with fresh counters
// between two statistics snapshots.
type restartingProxy struct {
	a, b     *httputil.ReverseProxy
	n        int64
	stats    atomic.Int64
	switched atomic.Bool
}

func (p *restartingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.switched.Load() {
		p.b.ServeHTTP(w, r)
		return
	}
	p.a.ServeHTTP(w, r)
	if strings.HasSuffix(r.URL.Path, "/stats") && p.stats.Add(1) == p.n {
		p.switched.Store(true)
	}
}

// The server restarts between statistics snapshots: the window that spans
// the restart is marked Reset, and no server-side figure anywhere in the
// result is negative or larger than what the client sent.
func TestFaultServerRestartResetsStatistics(t *testing.T) {
	a := startServer(t, refserver.Options{})
	b := startServer(t, refserver.Options{})
	// A long-lived server has large counters; a restarted one starts from
	// zero, so the first snapshot after the restart is below the last one.
	preload(t, a, 300)
	rp := &restartingProxy{a: proxyTo(a), b: proxyTo(b), n: 2}
	front := httptest.NewServer(rp)
	t.Cleanup(front.Close)
	dir := t.TempDir()
	// Three windows, all kept as trials, so the window spanning the switch
	// is among them whatever the stability verdict.
	sc := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: restart
server:
  url: `+strings.TrimPrefix(front.URL, "http://")+`
  timeout: 2s
models:
  - name: simple
sweep:
  concurrency: [1, 2]
measurement:
  window: 200ms
  max_trials: 3
  trials: 3
  allow_unstable: true
`)
	out := filepath.Join(dir, "r.json")
	r := runFault(t, context.Background(), "run", sc, "-q", "--out", out)
	if !rp.switched.Load() {
		t.Fatalf("the run asked for statistics fewer than %d times: %s", rp.n, r)
	}
	res := readResult(t, out)
	resets := 0
	for _, p := range res.Points {
		var sent int64
		for _, w := range p.Windows {
			sent += w.Requests + w.Errors
		}
		for _, tr := range p.Trials {
			s := tr.Metrics.Server
			if s == nil {
				continue
			}
			if s.Reset {
				resets++
			}
			for name, v := range map[string]float64{
				"request_count": float64(s.RequestCount), "inference_count": float64(s.InferenceCount),
				"execution_count": float64(s.ExecutionCount), "avg_request_us": s.AvgRequestUs, "queue_us": s.QueueUs,
				"compute_infer_us": s.ComputeInferUs,
			} {
				if v < 0 || v > 1e9 {
					t.Errorf("%s trial %d: server %s = %g", p.ID, tr.Index, name, v)
				}
			}
			// Requests in flight when a window's first snapshot is taken
			// (warm-up included) finish inside it on the server but belong
			// to no client window: up to one per outstanding request.
			if slack := int64(p.Concurrency); s.RequestCount > sent+slack {
				t.Errorf("%s trial %d: server counted %d requests, the client sent %d in the whole point (+%d in flight)", p.ID, tr.Index, s.RequestCount, sent, slack)
			}
		}
	}
	if resets == 0 {
		t.Errorf("restart between snapshots not detected in any kept trial: %s", r)
	}
}

// preload sends n inferences of model simple straight to srv.
func preload(t *testing.T, srv *refserver.Server, n int) {
	t.Helper()
	in := `{"name":"INPUT%d","datatype":"INT32","shape":[1,16],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}`
	body := `{"inputs":[` + fmt.Sprintf(in, 0) + "," + fmt.Sprintf(in, 1) + `]}`
	url := "http://" + srv.HTTPAddr() + "/v2/models/simple/infer"
	for i := 0; i < n; i++ {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("preload request %d: %s", i, resp.Status)
		}
	}
}
