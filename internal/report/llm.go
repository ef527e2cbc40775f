package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/perfscen/perfscen/runner/result"
)

// llmHeader is the LLM table: per point, requests and tokens per second,
// TTFT, inter-token gaps, TPOT and goodput.
var llmHeader = []string{"point", "req/s", "output tok/s", "TTFT p50", "TTFT p95", "ITL p50", "ITL p95", "TPOT avg", "TPOT p95", "goodput", "tokens from"}

// llmRows are the LLM table's rows; nil when no point has LLM figures.
func llmRows(run *result.Run) [][]string {
	var rows [][]string
	for i := range run.Points {
		p := &run.Points[i]
		figs := p.FigureMetrics()
		l := figs.LLM
		if l == nil {
			continue
		}
		rows = append(rows, []string{p.ID, paFloat(figs.Throughput), strconv.FormatFloat(l.OutputTokensPerSec, 'f', 1, 64),
			dur(&l.TTFT, l.TTFT.P50Us), dur(&l.TTFT, l.TTFT.P95Us), dur(&l.ITL, l.ITL.P50Us), dur(&l.ITL, l.ITL.P95Us),
			dur(&l.TPOT, l.TPOT.AvgUs), dur(&l.TPOT, l.TPOT.P95Us), goodput(l), tokenSource(l)})
	}
	return rows
}

func dur(d *result.Distribution, us float64) string {
	if !d.Has() {
		return "-"
	}
	return quantity(us, "us")
}

func goodput(l *result.LLMMetrics) string {
	if l.Goodput == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f/s", *l.Goodput)
}

func tokenSource(l *result.LLMMetrics) string {
	switch {
	case l.TokensFromChunks == 0 && l.TokensFromUsage == 0:
		// No counted request: imported figures, or nothing succeeded.
		return "-"
	case l.TokensFromChunks == 0:
		return "usage"
	case l.TokensFromUsage == 0:
		return "chunks"
	}
	return "mixed"
}

// llmBlock adds the token figures under a point's perf_analyzer block.
func llmBlock(w io.Writer, p *result.Point) {
	figs := p.FigureMetrics()
	l := figs.LLM
	if l == nil {
		return
	}
	fmt.Fprintf(w, "  LLM: \n")
	out, in := strconv.FormatInt(l.OutputTokens, 10), inputTokens(l)
	if figs.IsAbsent(result.LLMAbsent + "output_tokens") {
		// An import with token rates but no totals (genai-perf).
		out = notCarried
	}
	if figs.IsAbsent(result.LLMAbsent + "input_tokens") {
		in = notCarried
	}
	fmt.Fprintf(w, "    Output tokens: %s (%s/s, from %s); input tokens: %s\n", out,
		strconv.FormatFloat(l.OutputTokensPerSec, 'f', 1, 64), tokenSource(l), in)
	for _, d := range []struct {
		name string
		d    result.Distribution
	}{{"Time to first token", l.TTFT}, {"Inter-token latency (chunk gaps)", l.ITL}, {"Time per output token (per request)", l.TPOT}} {
		if !d.d.Has() {
			continue
		}
		n := "as reported"
		if d.d.Count > 0 {
			n = fmt.Sprintf("n=%d", d.d.Count)
		}
		fmt.Fprintf(w, "    %s: avg %s, p50 %s, p90 %s, p95 %s, p99 %s (%s)\n", d.name, quantity(d.d.AvgUs, "us"),
			quantity(d.d.P50Us, "us"), quantity(d.d.P90Us, "us"), quantity(d.d.P95Us, "us"), quantity(d.d.P99Us, "us"), n)
	}
	if l.Goodput != nil {
		fmt.Fprintf(w, "    Goodput: %.1f requests/s (%d of %d requests met the SLO)\n", *l.Goodput, l.GoodRequests, figs.Requests)
	}
}

// llmCSVColumn is one LLM column of the CSV: times in integer
// microseconds like perf_analyzer's latency columns; an empty cell is a
// figure the point does not have (no streamed request, no goodput SLO).
type llmCSVColumn struct {
	name string
	cell func(l *result.LLMMetrics) string
}

func llmDistColumns(prefix string, pick func(l *result.LLMMetrics) *result.Distribution) []llmCSVColumn {
	stats := []struct {
		name string
		f    func(d *result.Distribution) float64
	}{
		{"avg", func(d *result.Distribution) float64 { return d.AvgUs }},
		{"p50", func(d *result.Distribution) float64 { return d.P50Us }},
		{"p90", func(d *result.Distribution) float64 { return d.P90Us }},
		{"p95", func(d *result.Distribution) float64 { return d.P95Us }},
		{"p99", func(d *result.Distribution) float64 { return d.P99Us }},
	}
	out := make([]llmCSVColumn, len(stats))
	for i, s := range stats {
		out[i] = llmCSVColumn{prefix + " " + s.name, func(l *result.LLMMetrics) string {
			d := pick(l)
			if !d.Has() {
				return ""
			}
			return usec(s.f(d))
		}}
	}
	return out
}

// llmCSVColumns follow perf_analyzer's columns in the CSV of an openai-kind
// run; `perfscen import` reads them back.
var llmCSVColumns = slices.Concat(
	[]llmCSVColumn{
		{"Output Tokens/Second", func(l *result.LLMMetrics) string { return paFloat(l.OutputTokensPerSec) }},
		{"Goodput", func(l *result.LLMMetrics) string {
			if l.Goodput == nil {
				return ""
			}
			return paFloat(*l.Goodput)
		}},
	},
	llmDistColumns("TTFT", func(l *result.LLMMetrics) *result.Distribution { return &l.TTFT }),
	llmDistColumns("ITL", func(l *result.LLMMetrics) *result.Distribution { return &l.ITL }),
	llmDistColumns("TPOT", func(l *result.LLMMetrics) *result.Distribution { return &l.TPOT }),
	[]llmCSVColumn{
		{"Output Tokens", func(l *result.LLMMetrics) string { return strconv.FormatInt(l.OutputTokens, 10) }},
		{"Input Tokens", func(l *result.LLMMetrics) string {
			if !inputTokensKnown(l) {
				return "" // the server sent no usage: unknown, not 0
			}
			return strconv.FormatInt(l.InputTokens, 10)
		}},
		{"Token Count Source", tokenSource},
	},
)

// inputTokensKnown: only the server's usage counts input tokens; with no
// reply carrying usage the count is unknown, not 0. Imported figures
// (no per-request source counts) stand as the file gave them.
func inputTokensKnown(l *result.LLMMetrics) bool {
	return l.TokensFromUsage > 0 || l.TokensFromChunks == 0
}

// inputTokens is the input-token figure for people.
func inputTokens(l *result.LLMMetrics) string {
	switch {
	case !inputTokensKnown(l):
		return "unknown (the server sent no usage)"
	case l.TokensFromChunks > 0:
		return fmt.Sprintf("%d (from the %d replies with usage)", l.InputTokens, l.TokensFromUsage)
	}
	return strconv.FormatInt(l.InputTokens, 10)
}
