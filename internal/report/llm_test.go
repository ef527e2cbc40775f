package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

func llmRun() *result.Run {
	g := 12.5
	pt := func(c int, tput, ttft, itl float64) result.Point {
		return result.Point{ID: "llm/c=" + string(rune('0'+c)), Model: "llm", ModelName: "llm", Protocol: "http", Mode: "concurrency",
			Concurrency: c, Status: result.PointStable, BatchSize: 1,
			Summary: result.Metrics{Throughput: tput, Requests: 100, P50Us: 1e5, P95Us: 2e5, LatencyAvgUs: 1e5,
				LLM: &result.LLMMetrics{Streamed: 100, TTFT: result.Distribution{Count: 100, P50Us: ttft, P95Us: 2 * ttft},
					ITL: result.Distribution{Count: 900, P50Us: itl, P95Us: 2 * itl}, TPOT: result.Distribution{Count: 100, AvgUs: itl, P95Us: itl},
					OutputTokens: 1000, OutputTokensPerSec: 10 * tput, Goodput: &g, GoodRequests: 50, TokensFromUsage: 90, TokensFromChunks: 10}}}
	}
	return &result.Run{Scenario: "llm", Source: "perfscen", Status: result.StatusComplete,
		Points: []result.Point{pt(1, 5, 20e3, 8e3), pt(4, 18, 40e3, 9e3)}}
}

func TestLLMTablesAndPlots(t *testing.T) {
	run := llmRun()
	var con bytes.Buffer
	if err := Console(&con, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"output tok/s", "TTFT p95", "│ llm/c=4 │ 18    │ 180.0        │ 40.00ms  │ 80.00ms", "40.00ms", "12.5/s", "mixed",
		"Time to first token: avg 0us, p50 40.00ms", "Goodput: 12.5 requests/s (50 of 100 requests met the SLO)"} {
		if !strings.Contains(con.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, con.String())
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### LLM") || !strings.Contains(md.String(), "| llm/c=1 | 5 | 50.0 | 20.00ms | 40.00ms |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var h bytes.Buffer
	if err := HTML(&h, run, nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ttft_p95 latency", "itl_p95 latency"} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("html lacks the %q plot", want)
		}
	}
}
