package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/importer"
	"github.com/perfscen/perfscen/runner/result"
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
		"Time to first token: avg 0µs, p50 40.00ms", "Goodput: 12.5 requests/s (50 of 100 requests met the SLO)"} {
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

// llmSweepRun is an openai-kind run over two input lengths at two
// concurrencies, one point without a goodput SLO figure and one whose
// token counts came from chunks.
func llmSweepRun() *result.Run {
	run := &result.Run{Scenario: "llm-sweep", Source: "perfscen", Status: result.StatusComplete, ScenarioPath: "scenarios/llm-sweep.yaml"}
	for i, c := range []struct {
		conc, in  int
		tput, tps float64
		ttft, itl float64
		goodput   bool
		chunks    int64
	}{
		{4, 128, 30.5, 976.2, 21500, 8700, true, 0},
		{16, 128, 88.25, 2824.8, 48200, 10100, true, 0},
		{4, 512, 27.4, 876.8, 35100, 8800, false, 0},
		{16, 512, 70.1, 2243.2, 91800, 10400, true, 12},
	} {
		id := fmt.Sprintf("llm/c=%d,in=%d,out=32", c.conc, c.in)
		l := &result.LLMMetrics{Streamed: 100,
			TTFT:         result.Distribution{Count: 100, AvgUs: c.ttft * 1.1, P50Us: c.ttft, P90Us: c.ttft * 1.4, P95Us: c.ttft * 1.6, P99Us: c.ttft * 2.2, MaxUs: c.ttft * 3},
			ITL:          result.Distribution{Count: 3100, AvgUs: c.itl * 1.05, P50Us: c.itl, P90Us: c.itl * 1.2, P95Us: c.itl * 1.3, P99Us: c.itl * 1.9, MaxUs: c.itl * 4},
			TPOT:         result.Distribution{Count: 100, AvgUs: c.itl * 1.02, P50Us: c.itl, P90Us: c.itl * 1.1, P95Us: c.itl * 1.15, P99Us: c.itl * 1.3, MaxUs: c.itl * 1.5},
			OutputTokens: 3200, InputTokens: int64(100 * c.in), OutputTokensPerSec: c.tps,
			TokensFromUsage: 100 - c.chunks, TokensFromChunks: c.chunks}
		if c.goodput {
			g := c.tput * 0.9
			l.Goodput, l.GoodRequests = &g, 90
		}
		run.Points = append(run.Points, result.Point{ID: id, Model: "llm", ModelName: "llm", Protocol: "http", Mode: "concurrency",
			Concurrency: c.conc, Status: result.PointStable, BatchSize: 1,
			Coords: map[string]string{"concurrency": fmt.Sprint(c.conc), "input_tokens": fmt.Sprint(c.in), "output_tokens": "32"},
			Summary: result.Metrics{Throughput: c.tput, Requests: 100, LatencyAvgUs: 300000 + float64(i)*1000, P50Us: 290000, P90Us: 330000, P95Us: 350000, P99Us: 400000,
				ClientSendRecvUs: 40, ClientWaitUs: 299000, LLM: l}})
	}
	return run
}

// The LLM figures in every file report, pinned: CSV columns after
// perf_analyzer's, JUnit properties per point, the HTML LLM table beside
// the plots, and the swept lengths in every point's label.
func TestLLMGolden(t *testing.T) {
	run := llmSweepRun()
	for _, tt := range []struct{ golden, format string }{
		{"llm.golden.csv", "csv"},
		{"llm_junit.golden.xml", "junit"},
		{"llm.golden.md", "markdown"},
		{"llm_console.golden", "console"},
		{"llm.golden.html", "html"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			got := render(t, tt.format, run, nil, Options{})
			golden(t, tt.golden, got)
			if !strings.Contains(string(got), "llm/c=16,in=512,out=32") && tt.format != "csv" {
				t.Errorf("%s does not label the swept point", tt.format)
			}
		})
	}
}

func TestLLMCSVColumns(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, llmSweepRun(), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	header := strings.Split(lines[0], ",")
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, want := range []string{"TTFT p50", "TTFT p99", "ITL p95", "TPOT avg", "TPOT p99", "Output Tokens/Second", "Goodput", "Token Count Source"} {
		if _, ok := col[want]; !ok {
			t.Errorf("header lacks %q: %s", want, lines[0])
		}
	}
	// Rows sort by throughput: c=4,in=512 first (no goodput), then
	// c=4,in=128, c=16,in=512 (some counts from chunks), c=16,in=128.
	first, third := strings.Split(lines[1], ","), strings.Split(lines[3], ",")
	if first[col["TTFT p50"]] != "35100" || first[col["Goodput"]] != "" || first[col["Token Count Source"]] != "usage" {
		t.Errorf("first row %q", lines[1])
	}
	if third[col["Output Tokens/Second"]] != "2243.2" || third[col["Token Count Source"]] != "mixed" || third[col["ITL p95"]] != "13520" {
		t.Errorf("third row %q", lines[3])
	}
}

// perfscen import reads perfscen's own LLM CSV: perf_analyzer's columns
// as before, the LLM columns read past.
func TestLLMCSVImports(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, llmSweepRun(), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	pts, err := importer.ParseCSV("llm.csv", &b, importer.Options{Model: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 || pts[0].Summary.Throughput != 27.4 || pts[3].Summary.P99Us != 400000 {
		t.Errorf("imported %+v", pts)
	}
}
