package result

import "github.com/perfscen/perfscen/runner/plan"

// TurnMetrics are the figures of one turn index of multi-turn sessions:
// every conversation's turn Turn together.
type TurnMetrics struct {
	// Turn counts from 1.
	Turn int `json:"turn"`
	// Requests are the turn's successful requests; TTFT comes from the
	// streamed ones.
	Requests int64        `json:"requests"`
	TTFT     Distribution `json:"ttft"`
	// InputTokens is the turn's prompt tokens from usage (the history
	// grows turn by turn); 0 when no reply carried usage.
	InputTokens int64 `json:"input_tokens"`
}

// EngineMetrics are an LLM engine's own figures over a window, trial or
// point, read from its Prometheus endpoint under vLLM's names while the
// load ran. A family the server does not publish stays nil.
type EngineMetrics struct {
	// Samples is how many scrapes fell in the window.
	Samples int `json:"samples"`
	// Running and Waiting are vllm:num_requests_running and
	// vllm:num_requests_waiting.
	Running *Gauge `json:"requests_running,omitempty"`
	Waiting *Gauge `json:"requests_waiting,omitempty"`
	// KVCacheUsage is vllm:kv_cache_usage_perc (vllm:gpu_cache_usage_perc
	// before V1), a fraction.
	KVCacheUsage *Gauge `json:"kv_cache_usage,omitempty"`
	// PrefixCache is the growth of vllm:prefix_cache_queries and
	// vllm:prefix_cache_hits (tokens) over the window.
	PrefixCache *PrefixCache `json:"prefix_cache,omitempty"`
}

// Gauge is a sampled gauge's mean and largest value.
type Gauge struct {
	Avg float64 `json:"avg"`
	Max float64 `json:"max"`
}

// PrefixCache counts prompt tokens looked up in a prefix cache and found.
type PrefixCache struct {
	Queries float64 `json:"queries"`
	Hits    float64 `json:"hits"`
}

// HitRate is Hits ÷ Queries; ok is false without a query.
func (p *PrefixCache) HitRate() (float64, bool) {
	if p == nil || p.Queries <= 0 {
		return 0, false
	}
	return p.Hits / p.Queries, true
}

// EngineSample is one scrape of the engine's gauges, at Offset seconds
// from the start of the point's first window: the series the HTML report
// plots over the run.
type EngineSample struct {
	Offset       float64  `json:"offset_s"`
	Running      *float64 `json:"requests_running,omitempty"`
	Waiting      *float64 `json:"requests_waiting,omitempty"`
	KVCacheUsage *float64 `json:"kv_cache_usage,omitempty"`
}

func engineGauge(pick func(e *EngineMetrics) *Gauge, f func(g *Gauge) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.LLM == nil || m.LLM.Engine == nil {
			return 0, false
		}
		g := pick(m.LLM.Engine)
		if g == nil {
			return 0, false
		}
		return f(g), true
	}
}

func scheduleErr(f func(d *Distribution) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.ScheduleError == nil || !m.ScheduleError.Has() {
			return 0, false
		}
		return f(m.ScheduleError), true
	}
}

func init() {
	getters[plan.MetricPrefixCacheHitRate] = func(m *Metrics) (float64, bool) {
		if m.LLM == nil || m.LLM.Engine == nil {
			return 0, false
		}
		return m.LLM.Engine.PrefixCache.HitRate()
	}
	avg := func(g *Gauge) float64 { return g.Avg }
	mx := func(g *Gauge) float64 { return g.Max }
	kv := func(e *EngineMetrics) *Gauge { return e.KVCacheUsage }
	run := func(e *EngineMetrics) *Gauge { return e.Running }
	wait := func(e *EngineMetrics) *Gauge { return e.Waiting }
	getters[plan.MetricKVCacheUsageAvg] = engineGauge(kv, avg)
	getters[plan.MetricKVCacheUsageMax] = engineGauge(kv, mx)
	getters[plan.MetricRequestsRunningAvg] = engineGauge(run, avg)
	getters[plan.MetricRequestsRunningMax] = engineGauge(run, mx)
	getters[plan.MetricRequestsWaitingAvg] = engineGauge(wait, avg)
	getters[plan.MetricRequestsWaitingMax] = engineGauge(wait, mx)
	for _, s := range []struct {
		name string
		f    func(d *Distribution) float64
	}{
		{plan.MetricScheduleErrorAvg, func(d *Distribution) float64 { return d.AvgUs }},
		{plan.MetricScheduleErrorP50, func(d *Distribution) float64 { return d.P50Us }},
		{plan.MetricScheduleErrorP90, func(d *Distribution) float64 { return d.P90Us }},
		{plan.MetricScheduleErrorP95, func(d *Distribution) float64 { return d.P95Us }},
		{plan.MetricScheduleErrorP99, func(d *Distribution) float64 { return d.P99Us }},
		{plan.MetricScheduleErrorMax, func(d *Distribution) float64 { return d.MaxUs }},
	} {
		getters[s.name] = scheduleErr(s.f)
	}
}
