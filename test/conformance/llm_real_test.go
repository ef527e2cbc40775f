package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/scenario"
)

// The shipped LLM scenarios against a real OpenAI-compatible server
// (make conformance-llm starts Ollama with a tiny random-weight model; see
// docs/llm.md): every scenario measures without errors, a bare model name
// matches the server's default tag, and perfscen's time to first token
// agrees with an independent SSE timer (a plain HTTP client reading the
// stream line by line) at concurrency 1.
//
// PERFSCEN_LLM_URL (http://127.0.0.1:PORT) and PERFSCEN_LLM_MODEL name the
// server and model; without them the test says so once and skips.
func TestLLMAgainstARealServer(t *testing.T) {
	url, model := os.Getenv("PERFSCEN_LLM_URL"), os.Getenv("PERFSCEN_LLM_MODEL")
	if url == "" || model == "" {
		t.Skip("LLM CONFORMANCE SKIPPED: PERFSCEN_LLM_URL and PERFSCEN_LLM_MODEL are not set (make conformance-llm starts a real server)")
	}
	for _, sc := range []string{"llm-quickstart.yaml", "llm-server-ab.yaml"} {
		t.Run(sc, func(t *testing.T) {
			p := realServerPlan(t, "../../scenarios/"+sc, url, model)
			run, err := runner.Run(context.Background(), p, runner.Options{NoBaseline: true})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			for _, pt := range run.Points {
				if pt.Summary.Requests == 0 || pt.Errors.Count > 0 {
					t.Errorf("%s: %d requests, %d errors %v", pt.ID, pt.Summary.Requests, pt.Errors.Count, pt.Errors.First)
				}
				if m := pt.FigureMetrics(); m.LLM != nil {
					t.Logf("%s: %s, %d requests, %s req/s, %s output tokens/s, TTFT p50 %s p95 %s, TPOT p50 %s", pt.ID, pt.Status, m.Requests,
						numfmt.Decimal(m.Throughput, 1), numfmt.Decimal(m.LLM.OutputTokensPerSec, 1),
						numfmt.Micros(m.LLM.TTFT.P50Us), numfmt.Micros(m.LLM.TTFT.P95Us), numfmt.Micros(m.LLM.TPOT.P50Us))
				}
			}
			t.Logf("%s: %s", sc, run.Verdict.Summary)
		})
	}

	// TTFT at concurrency 1: perfscen's median against the independent
	// timer's, measured alternately in rounds so both see the same machine.
	p := realServerPlan(t, "../../scenarios/llm-quickstart.yaml", url, model)
	// A fixed count of requests, each run to its end: a run of windows
	// cancels the request in flight when it stops, and after such a
	// cancel this Ollama build has once stopped answering altogether.
	p.Points = p.Points[:1]
	p.Points[0].Load = plan.Load{Mode: plan.LoadIterations, Concurrency: 1, WarmupIterations: 2, Iterations: ttftRequests}
	p.Checks = plan.Checks{}
	var ours, theirs []float64
	bodies := scenarioBodies(t, p)
	for round := 0; round < 3; round++ {
		run, err := runner.Run(context.Background(), p, runner.Options{NoBaseline: true})
		if err != nil {
			t.Fatal(err)
		}
		l := run.Points[0].FigureMetrics().LLM
		if l == nil || !l.TTFT.Has() {
			t.Fatalf("no TTFT measured: %+v", run.Points[0].Notes)
		}
		ours = append(ours, l.TTFT.P50Us)
		// As many requests as perfscen's, right after: on a shared machine
		// the load changes from minute to minute, and both timers should
		// see the same mix of it.
		theirs = append(theirs, sseTTFT(t, url, bodies, ttftRequests)...)
	}
	a, b := median(ours), median(theirs)
	t.Logf("TTFT p50: perfscen %.0f us, independent SSE timer %.0f us (ratio %.3f; %d SSE requests)", a, b, a/b, len(theirs))
	if r := a / b; r < 0.8 || r > 1.25 {
		t.Errorf("perfscen's TTFT p50 %.0f us vs the independent timer's %.0f us: ratio %.3f outside [0.8, 1.25]", a, b, r)
	}
}

// realServerPlan is a shipped scenario pointed at the real server: every
// server becomes url, every model the served one.
func realServerPlan(t *testing.T, path, url, model string) *plan.Plan {
	t.Helper()
	p, err := scenario.LoadPlan(path, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	point := func(s *plan.Server) {
		s.Embedded, s.URL, s.EmbeddedModels = false, url, nil
	}
	point(&p.Servers[0])
	for i := range p.Servers {
		point(&p.Servers[i])
	}
	for i := range p.Models {
		p.Models[i].Name = model
	}
	return p
}

// scenarioBodies are the request bodies perfscen sends at p's first point
// (its synthetic prompts, same seed): the independent timer times the same
// prompts and output lengths, not a prompt of its own.
func scenarioBodies(t *testing.T, p *plan.Plan) [][]byte {
	t.Helper()
	pt := &p.Points[0]
	for _, m := range p.Models {
		if m.Alias != pt.Model || m.Prompts == nil {
			continue
		}
		pr := m.PromptsAt(pt)
		bodies, err := openai.Synthetic(openai.Prompts{InputMean: pr.InputMean, InputStdDev: pr.InputStdDev,
			OutputMean: pr.OutputMean, OutputStdDev: pr.OutputStdDev, Count: pr.Count, Seed: pr.Seed, IgnoreEOS: pr.IgnoreEOS},
			openai.BodyOptions{Model: m.Name, Endpoint: openai.EndpointChat, Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		return bodies
	}
	t.Fatalf("point %s: no model with synthetic prompts", pt.ID)
	return nil
}

// ttftRequests is how many requests each timer times per round.
const ttftRequests = 30

// sseTTFT times n streamed chat requests (bodies in turn) one after
// another with nothing but net/http: send → the first data line carrying
// content.
func sseTTFT(t *testing.T, url string, bodies [][]byte, n int) []float64 {
	t.Helper()
	defer sseClient.CloseIdleConnections() // the package checks for leaked goroutines
	var out []float64
	for i := 0; i < n; i++ {
		start := time.Now()
		// Bounded, so that a server that stops answering fails the test
		// rather than hold it until go test's timeout.
		resp, err := sseClient.Post(strings.TrimRight(url, "/")+"/v1/chat/completions", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			t.Fatalf("the independent timer, request %d: %v", i+1, err)
		}
		// Every reply is read to its end, as perfscen reads it: the server
		// does the same work for both timers, and Ollama v0.17.4, when
		// clients hang up mid-stream, now and then keeps a sequence that
		// never ends and then answers nothing more (seen when this timer
		// stopped reading at the first token).
		sc := bufio.NewScanner(resp.Body)
		timed := false
		for sc.Scan() {
			line := sc.Text()
			if timed || !strings.HasPrefix(line, "data: ") || line == "data: [DONE]" {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(line[6:]), &chunk) == nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				out = append(out, float64(time.Since(start).Microseconds()))
				timed = true
			}
		}
		resp.Body.Close()
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("the independent timer saw no content chunk"))
	}
	return out
}

// sseClient is the independent timer's client: net/http's defaults but
// for a timeout, the scenario's own 30 s.
var sseClient = &http.Client{Timeout: 30 * time.Second}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
