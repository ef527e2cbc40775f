package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// llmScenario writes an openai-kind scenario on the embedded server: 24
// requests at concurrency 4 on a fast simulated engine, pinned to 6 output
// tokens each.
func llmScenario(t *testing.T, engine, extra string) string {
	t.Helper()
	y := `version: 1
server:
  kind: openai
  embedded: true
  timeout: 10s
  embedded_models:
    llm: {decode_base: 200us, decode_per_seq: 10us, prefill_base: 100us, prefill_per_token: 1us` + engine + `}
models:
  - name: llm
    prompts:
      input_tokens: {mean: 16, stddev: 4}
      output_tokens: {mean: 6}
      count: 8
load:
  mode: iterations
  concurrency: 4
  iterations: 24
llm:
  goodput: {e2e: 1h}
` + extra
	p := filepath.Join(t.TempDir(), "llm.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runLLM(t *testing.T, path string) (*result.Run, error) {
	t.Helper()
	pl, err := scenario.LoadPlan(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), pl, Options{})
}

func TestOpenAIRunEmbedded(t *testing.T) {
	for _, endpoint := range []string{"", "  endpoint: v1/completions\n"} {
		path := llmScenario(t, "", "")
		if endpoint != "" {
			b, _ := os.ReadFile(path)
			_ = os.WriteFile(path, []byte(strings.Replace(string(b), "  timeout: 10s\n", "  timeout: 10s\n"+endpoint, 1)), 0o644)
		}
		run, err := runLLM(t, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Points) != 1 {
			t.Fatalf("points: %+v", run.Points)
		}
		m := run.Points[0].Summary
		l := m.LLM
		if m.Requests != 24 || m.Errors != 0 || l == nil {
			t.Fatalf("requests %d errors %d llm %v (%v)", m.Requests, m.Errors, l, run.Points[0].Errors.First)
		}
		// ignore_eos pins every reply at max_tokens = 6: 24 × 6 tokens,
		// 5 gaps per request, one TTFT and one TPOT each, all from usage.
		if l.OutputTokens != 144 || l.TokensFromUsage != 24 || l.TTFT.Count != 24 || l.ITL.Count != 120 || l.TPOT.Count != 24 {
			t.Errorf("llm figures: %+v", l)
		}
		if l.Goodput == nil || l.GoodRequests != 24 || l.OutputTokensPerSec <= 0 {
			t.Errorf("goodput %v (%d good), %g tokens/s", l.Goodput, l.GoodRequests, l.OutputTokensPerSec)
		}
		if v, ok := m.Value(plan.MetricTTFTP95); !ok || v <= 0 {
			t.Errorf("ttft_p95 = %v, %v", v, ok)
		}
		// Generation requests are timed like any other: the client's
		// send and the wait for the reply add up to the latency.
		if m.ClientWaitUs <= 0 || m.ClientSendRecvUs+m.ClientWaitUs > 1.01*m.LatencyAvgUs+1 {
			t.Errorf("send/recv %g us + wait %g us vs latency %g us", m.ClientSendRecvUs, m.ClientWaitUs, m.LatencyAvgUs)
		}
	}
}

func TestOpenAIRunCountsFailuresAsErrors(t *testing.T) {
	tests := []struct {
		name, engine, extra, want string
	}{
		{"HTTP 500 before any token", ", error_rate: 1", "", "server returned 500: injected engine failure"},
		{"error event mid-stream", ", midstream_error_rate: 1", "", "error event after"},
		{"usage required but off", ", usage: false", "  token_count: usage\n", "the reply carried no usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := runLLM(t, llmScenario(t, tc.engine, tc.extra))
			if run == nil || len(run.Points) != 1 {
				t.Fatalf("run %+v, err %v", run, err)
			}
			p := run.Points[0]
			if p.Errors.Count != 24 || p.Summary.Requests != 0 {
				t.Fatalf("errors %d, requests %d; want 24 failed requests (%v)", p.Errors.Count, p.Summary.Requests, p.Errors.First)
			}
			if len(p.Errors.First) == 0 || !strings.Contains(p.Errors.First[0], tc.want) {
				t.Errorf("first errors %q, want one containing %q", p.Errors.First, tc.want)
			}
		})
	}
}

func TestOpenAIRunUnservedModel(t *testing.T) {
	path := llmScenario(t, "", "")
	b, _ := os.ReadFile(path)
	_ = os.WriteFile(path, []byte(strings.Replace(string(b), "  - name: llm\n", "  - name: gpt-9\n", 1)), 0o644)
	_, err := runLLM(t, path)
	// The server answered and lacks the model: the scenario's mistake.
	if err == nil || failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), `model "gpt-9" (alias gpt-9) is not served`) {
		t.Fatalf("err = %v", err)
	}
}

// Each point of a token-length sweep sends its own lengths: the server's
// usage counts 24 requests × the point's input and output tokens.
func TestOpenAIRunTokenLengthSweep(t *testing.T) {
	path := llmScenario(t, "", "sweep:\n  input_tokens: [8, 32]\n  output_tokens: [3, 6]\n")
	b, _ := os.ReadFile(path)
	_ = os.WriteFile(path, []byte(strings.Replace(string(b), "      input_tokens: {mean: 16, stddev: 4}\n      output_tokens: {mean: 6}\n", "", 1)), 0o644)
	run, err := runLLM(t, path)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id      string
		in, out int64
	}{{"llm/c=4,in=8,out=3", 8, 3}, {"llm/c=4,in=8,out=6", 8, 6}, {"llm/c=4,in=32,out=3", 32, 3}, {"llm/c=4,in=32,out=6", 32, 6}}
	if len(run.Points) != len(want) {
		t.Fatalf("%d points, want %d", len(run.Points), len(want))
	}
	for i, w := range want {
		p := run.Points[i]
		l := p.Summary.LLM
		if p.ID != w.id || l == nil || p.Summary.Requests != 24 {
			t.Fatalf("point %d: %s, %d requests, llm %v (%v)", i, p.ID, p.Summary.Requests, l, p.Errors.First)
		}
		if l.OutputTokens != 24*w.out || l.InputTokens != 24*w.in {
			t.Errorf("%s: %d output and %d input tokens, want %d and %d", p.ID, l.OutputTokens, l.InputTokens, 24*w.out, 24*w.in)
		}
		if p.Coords["input_tokens"] == "" || p.Coords["output_tokens"] == "" {
			t.Errorf("%s: coords %v", p.ID, p.Coords)
		}
	}
}

// The embeddings endpoint: each request embeds batch_size inputs, so
// throughput is inputs per second and the server's usage counts every
// input's tokens; nothing is streamed or generated.
func TestOpenAIRunEmbeddings(t *testing.T) {
	y := `version: 1
server:
  kind: openai
  embedded: true
  endpoint: v1/embeddings
  timeout: 10s
  embedded_models:
    llm: {decode_base: 200us, decode_per_seq: 10us, prefill_base: 100us, prefill_per_token: 1us}
models:
  - name: llm
    batch_size: 4
    prompts: {input_tokens: {mean: 10}, count: 8}
load:
  mode: iterations
  concurrency: 2
  iterations: 12
`
	path := filepath.Join(t.TempDir(), "emb.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := runLLM(t, path)
	if err != nil {
		t.Fatal(err)
	}
	p := run.Points[0]
	m := p.Summary
	if p.BatchSize != 4 || m.Requests != 12 || m.Errors != 0 || m.LLM == nil {
		t.Fatalf("point %+v (%v)", m, p.Errors.First)
	}
	if m.LLM.InputTokens != 12*4*10 || m.LLM.OutputTokens != 0 || m.LLM.Streamed != 0 {
		t.Errorf("llm figures %+v", m.LLM)
	}
	// Throughput counts inputs: requests × 4 over the window.
	if reqs := float64(m.Requests) / (float64(p.Trials[0].Duration) / 1e9); m.Throughput < 3.99*reqs || m.Throughput > 4.01*reqs {
		t.Errorf("throughput %g, want 4 × %g requests/s", m.Throughput, reqs)
	}
}
