package conformance

import (
	"context"
	"os"
	"testing"

	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/runner/result"
)

// The shipped multi-turn and trace-replay scenarios against a real
// OpenAI-compatible server (make conformance-llm: Ollama with a tiny
// random-weight model, one sequence at a time): conversations of growing
// history run without an error, with TTFT and prompt tokens by turn; the
// trace's 240 requests are each sent once, open loop, with the schedule
// error of every send. The tiny model's tokenizer makes about five tokens
// of a word and its context is 2048 tokens, so the prompts are shortened:
// system prompt and messages here, the trace by its length_scale. The
// figures are logged for docs/llm.md; the verdicts are not gated (the
// scenarios' bounds are set for the simulated engine).
func TestLLMWorkloadsAgainstARealServer(t *testing.T) {
	url, model := os.Getenv("PERFSCEN_LLM_URL"), os.Getenv("PERFSCEN_LLM_MODEL")
	if url == "" || model == "" {
		t.Skip("LLM WORKLOAD CONFORMANCE SKIPPED: PERFSCEN_LLM_URL and PERFSCEN_LLM_MODEL are not set (make conformance-llm starts a real server)")
	}
	t.Run("llm-multiturn.yaml", func(t *testing.T) {
		p := realServerPlan(t, "../../scenarios/llm-multiturn.yaml", url, model)
		c := p.Models[0].Conversations
		c.SystemTokens, c.UserMean, c.UserStdDev, c.OutputMean = 60, 12, 2, 16
		p.Points[0].Load.Concurrency = 1 // one conversation at a time: the server's one slot keeps its history
		run, err := runner.Run(context.Background(), p, runner.Options{NoBaseline: true})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		pt := run.Points[0]
		f := pt.FigureMetrics()
		if f.Requests == 0 || pt.Errors.Count > 0 || f.LLM == nil || len(f.LLM.Turns) != c.Turns {
			t.Fatalf("%s: %d requests, %d errors %v, figures %+v", pt.ID, f.Requests, pt.Errors.Count, pt.Errors.First, f.LLM)
		}
		for _, tm := range f.LLM.Turns {
			in := int64(0)
			if tm.Requests > 0 {
				in = tm.InputTokens / tm.Requests
			}
			t.Logf("turn %d: %d requests, TTFT p50 %s p95 %s, prompt tokens avg %d", tm.Turn, tm.Requests,
				numfmt.Micros(tm.TTFT.P50Us), numfmt.Micros(tm.TTFT.P95Us), in)
		}
		t.Logf("%s: %s, %s req/s; %s", pt.ID, pt.Status, numfmt.Decimal(f.Throughput, 1), run.Verdict.Summary)
	})
	t.Run("llm-trace-replay.yaml", func(t *testing.T) {
		p := realServerPlan(t, "../../scenarios/llm-trace-replay.yaml", url, model)
		p.Models[0].Trace.LengthScale = 0.125
		run, err := runner.Run(context.Background(), p, runner.Options{NoBaseline: true})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		pt := run.Points[0]
		f := pt.FigureMetrics()
		se := f.ScheduleError
		if pt.Status != result.PointStable || f.Requests+f.Errors != int64(p.Models[0].Trace.Requests) || se == nil || se.Count != int64(p.Models[0].Trace.Requests) {
			t.Fatalf("%s: %s, %d requests, %d errors, schedule error %+v", pt.ID, pt.Status, f.Requests, f.Errors, se)
		}
		t.Logf("%s: %d requests (%d failed) at %s req/s, TTFT p50 %s p99 %s; schedule error p50 %s p99 %s max %s (waits: %s); %s", pt.ID, f.Requests+f.Errors, f.Errors,
			numfmt.Decimal(pt.RequestRate, 1), numfmt.Micros(f.LLM.TTFT.P50Us), numfmt.Micros(f.LLM.TTFT.P99Us),
			numfmt.Micros(se.P50Us), numfmt.Micros(se.P99Us), numfmt.Micros(se.MaxUs), f.ScheduleWait, run.Verdict.Summary)
	})
}
