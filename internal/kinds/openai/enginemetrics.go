package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/prom"
)

// engineFamilies maps the Prometheus families of LLM engines to the figure
// each is: vLLM's V1 names (docs.vllm.ai, "Production Metrics") and their
// pre-V1 forms, and SGLang's gauges. Counters appear with and without the
// _total suffix that Prometheus clients add.
var engineFamilies = map[string]func(f *kinds.EngineFigures) **float64{
	"vllm:num_requests_running":           func(f *kinds.EngineFigures) **float64 { return &f.Running },
	"vllm:num_requests_waiting":           func(f *kinds.EngineFigures) **float64 { return &f.Waiting },
	"vllm:kv_cache_usage_perc":            func(f *kinds.EngineFigures) **float64 { return &f.KVCacheUsage },
	"vllm:gpu_cache_usage_perc":           func(f *kinds.EngineFigures) **float64 { return &f.KVCacheUsage },
	"vllm:prefix_cache_queries":           func(f *kinds.EngineFigures) **float64 { return &f.PrefixQueries },
	"vllm:prefix_cache_queries_total":     func(f *kinds.EngineFigures) **float64 { return &f.PrefixQueries },
	"vllm:gpu_prefix_cache_queries":       func(f *kinds.EngineFigures) **float64 { return &f.PrefixQueries },
	"vllm:gpu_prefix_cache_queries_total": func(f *kinds.EngineFigures) **float64 { return &f.PrefixQueries },
	"vllm:prefix_cache_hits":              func(f *kinds.EngineFigures) **float64 { return &f.PrefixHits },
	"vllm:prefix_cache_hits_total":        func(f *kinds.EngineFigures) **float64 { return &f.PrefixHits },
	"vllm:gpu_prefix_cache_hits":          func(f *kinds.EngineFigures) **float64 { return &f.PrefixHits },
	"vllm:gpu_prefix_cache_hits_total":    func(f *kinds.EngineFigures) **float64 { return &f.PrefixHits },
	"sglang:num_running_reqs":             func(f *kinds.EngineFigures) **float64 { return &f.Running },
	"sglang:num_queue_reqs":               func(f *kinds.EngineFigures) **float64 { return &f.Waiting },
	"sglang:token_usage":                  func(f *kinds.EngineFigures) **float64 { return &f.KVCacheUsage },
}

// ParseEngineMetrics reads an engine's figures from a Prometheus text
// exposition, by the model_name label (SGLang's model_name too). Series
// of one model that differ in other labels (an engine index under data
// parallelism) are summed, except KV-cache usage, a fraction, which is
// their mean. An exposition without any of the families is no error: the
// reading is empty.
func ParseEngineMetrics(r io.Reader) (kinds.EngineReading, error) {
	list, err := prom.Parse(r, func(name string) bool { _, ok := engineFamilies[name]; return ok })
	if err != nil {
		return nil, err
	}
	out := kinds.EngineReading{}
	usageN := map[string]int{}
	for _, s := range list {
		model := s.Labels["model_name"]
		f := out[model]
		p := engineFamilies[s.Name](&f)
		if *p == nil {
			*p = new(float64)
		}
		**p += s.Value
		if p == &f.KVCacheUsage {
			usageN[model]++
		}
		out[model] = f
	}
	for model, n := range usageN {
		if n > 1 {
			f := out[model]
			*f.KVCacheUsage /= float64(n)
		}
	}
	return out, nil
}

// ScrapeEngine reads the engine's figures from the metrics URL
// (kinds.EngineGauges), over the client's connections.
func (s *server) ScrapeEngine(ctx context.Context) (kinds.EngineReading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metricsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics url %s: %w", s.metricsURL, err)
	}
	resp, err := s.client.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", s.metricsURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", s.metricsURL, resp.Status)
	}
	rd, err := ParseEngineMetrics(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", s.metricsURL, err)
	}
	return rd, nil
}
