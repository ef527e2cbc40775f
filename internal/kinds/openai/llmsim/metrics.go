package llmsim

import (
	"fmt"
	"math"
	"net/http"
	"strings"
)

// MetricsPath is where the engines' figures are served.
const MetricsPath = "/metrics"

// Prometheus names of the engine figures, as vLLM's V1 engine publishes
// them (docs.vllm.ai, "Production Metrics"), labelled by model_name.
const (
	MetricRunning       = "vllm:num_requests_running"
	MetricWaiting       = "vllm:num_requests_waiting"
	MetricKVCacheUsage  = "vllm:kv_cache_usage_perc"
	MetricPrefixQueries = "vllm:prefix_cache_queries_total"
	MetricPrefixHits    = "vllm:prefix_cache_hits_total"
)

// metrics writes every engine's gauges and counters in the Prometheus
// text format.
func (s *Server) metrics(w http.ResponseWriter) {
	var b strings.Builder
	models := Models()
	family := func(name, typ, help string, value func(e *engine) string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, m := range models {
			fmt.Fprintf(&b, "%s{model_name=%q} %s\n", name, m, value(s.engines[m]))
		}
	}
	family(MetricRunning, "gauge", "Number of requests in model execution batches.",
		func(e *engine) string { return fmt.Sprint(e.inFlight.Load()) })
	family(MetricWaiting, "gauge", "Number of requests waiting to be processed.",
		func(e *engine) string { return fmt.Sprint(e.waiting.Load()) })
	family(MetricKVCacheUsage, "gauge", "KV-cache usage. 1 means 100 percent usage.",
		func(e *engine) string { return fmt.Sprint(math.Float64frombits(e.kvUsage.Load())) })
	family(MetricPrefixQueries, "counter", "Prefix cache queries, in terms of number of queried tokens.",
		func(e *engine) string { return fmt.Sprint(e.queries.Load()) })
	family(MetricPrefixHits, "counter", "Prefix cache hits, in terms of number of cached tokens.",
		func(e *engine) string { return fmt.Sprint(e.hits.Load()) })
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
