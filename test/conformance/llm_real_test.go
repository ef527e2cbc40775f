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
			}
			t.Logf("%s: %s", sc, run.Verdict.Summary)
		})
	}

	// TTFT at concurrency 1: perfscen's median against the independent
	// timer's, measured alternately in rounds so both see the same machine.
	p := realServerPlan(t, "../../scenarios/llm-quickstart.yaml", url, model)
	p.Points = p.Points[:1]
	p.Points[0].Load.Concurrency = 1
	p.Checks = plan.Checks{}
	var ours, theirs []float64
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
		theirs = append(theirs, sseTTFT(t, url, model, 20)...)
	}
	a, b := median(ours), median(theirs)
	t.Logf("TTFT p50: perfscen %.0f us, independent SSE timer %.0f us (ratio %.3f)", a, b, a/b)
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
	point(&p.Server)
	for i := range p.Servers {
		point(&p.Servers[i])
	}
	for i := range p.Models {
		p.Models[i].Name = model
	}
	return p
}

// sseTTFT times n streamed chat requests one after another with nothing
// but net/http: send → the first data line carrying content.
func sseTTFT(t *testing.T, url, model string, n int) []float64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true, "max_tokens": 16,
		"messages": []map[string]string{{"role": "user", "content": strings.Repeat("hello world ", 32)}}})
	var out []float64
	for i := 0; i < n; i++ {
		start := time.Now()
		resp, err := http.Post(strings.TrimRight(url, "/")+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") || line == "data: [DONE]" {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(line[6:]), &chunk) == nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				out = append(out, float64(time.Since(start).Microseconds()))
				break
			}
		}
		resp.Body.Close()
	}
	if len(out) == 0 {
		t.Fatal(fmt.Errorf("the independent timer saw no content chunk"))
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
