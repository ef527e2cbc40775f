package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// workloadRun holds the figures of a multi-turn point read with the
// engine's metrics, and of a replayed trace with its schedule error.
func workloadRun() *result.Run {
	run := llmRun()
	turn := func(k int, p50 float64) result.TurnMetrics {
		return result.TurnMetrics{Turn: k, Requests: 10, InputTokens: int64(2000 * k), TTFT: result.Distribution{Count: 10, AvgUs: p50, P50Us: p50, P95Us: 2 * p50}}
	}
	l := run.Points[0].Summary.LLM
	l.Turns = []result.TurnMetrics{turn(1, 30e3), turn(2, 60e3), turn(3, 90e3)}
	l.Engine = &result.EngineMetrics{Samples: 12, Running: &result.Gauge{Avg: 3.5, Max: 6}, Waiting: &result.Gauge{Avg: 0.5, Max: 2},
		KVCacheUsage: &result.Gauge{Avg: 0.25, Max: 0.5}, PrefixCache: &result.PrefixCache{Queries: 1000, Hits: 750}}
	run.Points[0].EngineSeries = []result.EngineSample{{Offset: 0, KVCacheUsage: new(0.1)}, {Offset: 0.5, KVCacheUsage: new(0.4)}}
	run.Points[1].Summary.ScheduleError = &result.Distribution{Count: 240, AvgUs: 300, P50Us: 210, P90Us: 500, P95Us: 700, P99Us: 950, MaxUs: 1200}
	run.Points[1].Summary.ScheduleWait = "short-slice"
	return run
}

func TestWorkloadFigures(t *testing.T) {
	run := workloadRun()
	var con bytes.Buffer
	if err := Console(&con, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Turn 2: 10 requests, TTFT avg 60.00ms, p50 60.00ms, p95 120.00ms, input tokens avg 400",
		"Engine (12 readings): prefix-cache hit rate 75.00% (750 of 1000 prompt tokens); KV-cache usage avg 25.00%, max 50.00%; requests running avg 3.5, max 6; requests waiting avg 0.5, max 2",
		"Schedule error (send − due): avg 300µs, p50 210µs, p90 500µs, p95 700µs, p99 950µs, max 1.20ms (n=240; sends waited on ordinary threads with a short slice: real-time threads were not permitted (root or CAP_SYS_NICE))",
		"LLM workload: by turn, the engine's figures, the schedule",
		"│ llm/c=1 │ 1: 30.00ms, 2: 60.00ms, 3: 90.00ms │ 75.00%",
	} {
		if !strings.Contains(con.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, con.String())
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| llm/c=4 | - | - | - | - | - | - | 210µs | 950µs |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var h bytes.Buffer
	if err := HTML(&h, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="turns"`, "Time to first token by turn", `id="kv-cache"`, "KV-cache usage over the run", "LLM workload"} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	var j bytes.Buffer
	if err := JUnit(&j, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="llm/c=1.turn2.ttft_p50_us" value="60000"`, `name="llm/c=1.prefix_cache_hit_rate" value="0.75"`,
		`name="llm/c=4.schedule_error_p99_us" value="950"`, `name="llm/c=4.schedule_wait" value="short-slice"`} {
		if !strings.Contains(j.String(), want) {
			t.Errorf("junit lacks %s:\n%s", want, j.String())
		}
	}
	// A run without these figures shows none of them.
	con.Reset()
	if err := Console(&con, llmRun(), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(con.String(), "LLM workload") || strings.Contains(con.String(), "By turn") {
		t.Errorf("figures shown that the run lacks:\n%s", con.String())
	}
}
