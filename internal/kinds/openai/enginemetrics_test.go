package openai

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
)

func TestParseEngineMetrics(t *testing.T) {
	text := `# HELP vllm:num_requests_running x
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{engine="1",model_name="m"} 2
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.4
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{model_name="m"} 1000
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{model_name="m"} 600
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="other"} 7
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs 4
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12
`
	r, err := ParseEngineMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.For("m")
	if !ok || *m.Running != 5 || *m.KVCacheUsage < 0.3-1e-12 || *m.KVCacheUsage > 0.3+1e-12 || *m.PrefixQueries != 1000 || *m.PrefixHits != 600 || m.Waiting != nil {
		t.Errorf("model m: %+v", m)
	}
	if o, _ := r.For("other"); o.Waiting == nil || *o.Waiting != 7 || o.Running != nil {
		t.Errorf("model other: %+v", o)
	}
	// A model the labels do not name reads the unlabelled figures.
	if u, ok := r.For("any"); !ok || u.Waiting == nil || *u.Waiting != 4 {
		t.Errorf("unlabelled: %+v", u)
	}
	if _, err := ParseEngineMetrics(strings.NewReader("vllm:num_requests_running{ 3\n")); err == nil {
		t.Error("a malformed exposition was read")
	}
}

func FuzzParseEngineMetrics(f *testing.F) {
	f.Add("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n")
	f.Add("vllm:prefix_cache_hits_total{model_name=\"m\"} 1e9\nvllm:kv_cache_usage_perc 0.5\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseEngineMetrics(strings.NewReader(text))
		if err != nil {
			return
		}
		for model, f := range r {
			for _, v := range []*float64{f.Running, f.Waiting, f.KVCacheUsage, f.PrefixQueries, f.PrefixHits} {
				if v == nil {
					continue
				}
				_ = *v
			}
			if _, ok := r.For(model); !ok {
				t.Fatalf("model %q read but not found", model)
			}
		}
		var _ kinds.EngineReading = r
	})
}
