package result

import "github.com/perfscen/perfscen/runner/plan"

// LLMMetrics are the token-level figures of an openai-kind window, trial
// or point; docs/llm.md defines each.
type LLMMetrics struct {
	// Streamed counts successful requests with token timing (streamed
	// replies); TTFT, ITL and TPOT come from them alone.
	Streamed int64 `json:"streamed"`
	// TTFT is send → first non-empty content chunk, per request.
	TTFT Distribution `json:"ttft"`
	// ITL is the distribution of gaps between consecutive content chunks.
	ITL Distribution `json:"itl"`
	// TPOT is per request (e2e − TTFT)/(output tokens − 1), requests with
	// at least two tokens.
	TPOT Distribution `json:"tpot"`
	// OutputTokens and InputTokens are totals over successful requests;
	// InputTokens only counts replies with usage.
	OutputTokens int64 `json:"output_tokens"`
	InputTokens  int64 `json:"input_tokens"`
	// OutputTokensPerSec is OutputTokens over the window time.
	OutputTokensPerSec float64 `json:"output_tokens_per_s"`
	// Goodput is requests per second meeting every goodput SLO; absent
	// when the scenario sets no SLO.
	Goodput      *float64 `json:"goodput,omitempty"`
	GoodRequests int64    `json:"good_requests,omitempty"`
	// TokensFromUsage and TokensFromChunks count requests whose output
	// token count came from the server's usage or from counted chunks.
	TokensFromUsage  int64 `json:"tokens_from_usage"`
	TokensFromChunks int64 `json:"tokens_from_chunks"`
	// Turns are the figures by turn index of multi-turn sessions.
	Turns []TurnMetrics `json:"turns,omitempty"`
	// Engine are the server engine's own figures (its Prometheus
	// endpoint), when it publishes them.
	Engine *EngineMetrics `json:"engine,omitempty"`
}

// Has reports whether d holds figures: a measured sample, or the values
// a file imported from perfscen's or genai-perf's CSV reported without
// a count of the requests behind them.
func (d *Distribution) Has() bool {
	return d.Count > 0 || d.AvgUs > 0 || d.P50Us > 0 || d.P90Us > 0 || d.P95Us > 0 || d.P99Us > 0 || d.MaxUs > 0
}

// Distribution summarizes a duration sample in microseconds.
type Distribution struct {
	Count int64   `json:"count"`
	AvgUs float64 `json:"avg_us"`
	P50Us float64 `json:"p50_us"`
	P90Us float64 `json:"p90_us"`
	P95Us float64 `json:"p95_us"`
	P99Us float64 `json:"p99_us"`
	MaxUs float64 `json:"max_us"`
}

// llmDist reads one figure of a distribution; key is its JSON key under
// Absent ("llm.ttft.max_us"), so a figure the source lacked has no value.
func llmDist(key string, pick func(l *LLMMetrics) *Distribution, f func(d *Distribution) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.LLM == nil || m.IsAbsent(key) {
			return 0, false
		}
		d := pick(m.LLM)
		if !d.Has() {
			return 0, false
		}
		return f(d), true
	}
}

func llmValue(f func(l *LLMMetrics) (float64, bool)) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.LLM == nil {
			return 0, false
		}
		return f(m.LLM)
	}
}

func init() {
	dists := []struct {
		prefix string
		pick   func(l *LLMMetrics) *Distribution
	}{
		{"ttft", func(l *LLMMetrics) *Distribution { return &l.TTFT }},
		{"itl", func(l *LLMMetrics) *Distribution { return &l.ITL }},
		{"tpot", func(l *LLMMetrics) *Distribution { return &l.TPOT }},
	}
	stats := []struct {
		suffix, key string
		f           func(d *Distribution) float64
	}{
		{"avg", "avg_us", func(d *Distribution) float64 { return d.AvgUs }},
		{"p50", "p50_us", func(d *Distribution) float64 { return d.P50Us }},
		{"p90", "p90_us", func(d *Distribution) float64 { return d.P90Us }},
		{"p95", "p95_us", func(d *Distribution) float64 { return d.P95Us }},
		{"p99", "p99_us", func(d *Distribution) float64 { return d.P99Us }},
		{"max", "max_us", func(d *Distribution) float64 { return d.MaxUs }},
	}
	for _, d := range dists {
		for _, s := range stats {
			name := d.prefix + "_" + s.suffix
			getters[name] = llmDist(LLMAbsent+d.prefix+"."+s.key, d.pick, s.f)
		}
	}
	getters[plan.MetricOutputTokensPS] = llmValue(func(l *LLMMetrics) (float64, bool) { return l.OutputTokensPerSec, true })
	getters[plan.MetricGoodput] = llmValue(func(l *LLMMetrics) (float64, bool) {
		if l.Goodput == nil {
			return 0, false
		}
		return *l.Goodput, true
	})
	getters[plan.MetricOutputTokensAvg] = llmValue(func(l *LLMMetrics) (float64, bool) {
		n := l.TokensFromUsage + l.TokensFromChunks
		if n == 0 {
			return 0, false
		}
		return float64(l.OutputTokens) / float64(n), true
	})
}
