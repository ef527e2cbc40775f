package plan

import "sort"

// Metric names used by thresholds, comparisons, baselines and reports.
const (
	MetricThroughput     = "throughput"
	MetricLatencyAvg     = "latency_avg"
	MetricP50            = "p50"
	MetricP90            = "p90"
	MetricP95            = "p95"
	MetricP99            = "p99"
	MetricLatencyMax     = "latency_max"
	MetricErrors         = "errors"
	MetricErrorRate      = "error_rate"
	MetricServerQueue    = "server_queue"
	MetricServerInput    = "server_compute_input"
	MetricServerInfer    = "server_compute_infer"
	MetricServerOutput   = "server_compute_output"
	MetricClientSendRecv = "client_send_recv"
	MetricClientWait     = "client_wait"
	// The server process's own use of the CPUs per inference (see
	// ServerProcess): CPU time, run-queue delay (time its threads were
	// runnable and waited for a CPU) and, where hardware counters exist,
	// instructions retired. A busy machine stretches wall-clock figures by
	// the run-queue delay; CPU time and instructions stay where the build
	// put them.
	MetricServerCPU  = "server_cpu_infer"
	MetricServerRunQ = "server_runq_infer"
	// MetricServerPreempt is the part of the run-queue delay that followed
	// preemptions (time-slicing in the middle of work), not wake-ups.
	MetricServerPreempt = "server_preempt_infer"
	MetricServerInstr   = "server_instr_infer"
	// MetricServerWork is the CPU time per inference divided by the CPU
	// time a fixed kernel took in the same window: CPU work in units the
	// host's clock and other guests do not move.
	MetricServerWork = "server_work_infer"
)

// LLM metric names (openai-kind runs). Latency metrics (p50 … latency_max)
// are the end-to-end request latency for LLM runs too; throughput is
// requests per second.
const (
	MetricTTFTAvg         = "ttft_avg"
	MetricTTFTP50         = "ttft_p50"
	MetricTTFTP90         = "ttft_p90"
	MetricTTFTP95         = "ttft_p95"
	MetricTTFTP99         = "ttft_p99"
	MetricTTFTMax         = "ttft_max"
	MetricITLAvg          = "itl_avg"
	MetricITLP50          = "itl_p50"
	MetricITLP90          = "itl_p90"
	MetricITLP95          = "itl_p95"
	MetricITLP99          = "itl_p99"
	MetricITLMax          = "itl_max"
	MetricTPOTAvg         = "tpot_avg"
	MetricTPOTP50         = "tpot_p50"
	MetricTPOTP90         = "tpot_p90"
	MetricTPOTP95         = "tpot_p95"
	MetricTPOTP99         = "tpot_p99"
	MetricTPOTMax         = "tpot_max"
	MetricOutputTokensPS  = "output_tokens_per_s"
	MetricGoodput         = "goodput"
	MetricOutputTokensAvg = "output_tokens_avg"
)

// LLM engine metrics (openai kind, from the server's Prometheus figures
// under vLLM's names) and the schedule error of open-loop sends.
const (
	MetricPrefixCacheHitRate = "prefix_cache_hit_rate"
	MetricKVCacheUsageAvg    = "kv_cache_usage_avg"
	MetricKVCacheUsageMax    = "kv_cache_usage_max"
	MetricRequestsRunningAvg = "requests_running_avg"
	MetricRequestsRunningMax = "requests_running_max"
	MetricRequestsWaitingAvg = "requests_waiting_avg"
	MetricRequestsWaitingMax = "requests_waiting_max"
	MetricScheduleErrorAvg   = "schedule_error_avg"
	MetricScheduleErrorP50   = "schedule_error_p50"
	MetricScheduleErrorP90   = "schedule_error_p90"
	MetricScheduleErrorP95   = "schedule_error_p95"
	MetricScheduleErrorP99   = "schedule_error_p99"
	MetricScheduleErrorMax   = "schedule_error_max"
)

// MetricInfo describes a metric checks can name: its unit and which
// direction is better. The result model computes each metric's value
// (result.Metrics.Value); this is the catalogue scenario checks names
// against before any run.
type MetricInfo struct {
	Name         string
	Unit         string // "infer/s", "us", "count", "fraction", "tokens/s", "req/s"
	HigherBetter bool
}

var metricCatalogue = func() map[string]MetricInfo {
	out := map[string]MetricInfo{}
	add := func(name, unit string, higher bool) {
		out[name] = MetricInfo{Name: name, Unit: unit, HigherBetter: higher}
	}
	add(MetricThroughput, "infer/s", true)
	add(MetricLatencyAvg, "us", false)
	add(MetricP50, "us", false)
	add(MetricP90, "us", false)
	add(MetricP95, "us", false)
	add(MetricP99, "us", false)
	add(MetricLatencyMax, "us", false)
	add(MetricErrors, "count", false)
	add(MetricErrorRate, "fraction", false)
	add(MetricServerQueue, "us", false)
	add(MetricServerInput, "us", false)
	add(MetricServerInfer, "us", false)
	add(MetricServerOutput, "us", false)
	add(MetricClientSendRecv, "us", false)
	add(MetricClientWait, "us", false)
	add(MetricServerCPU, "us", false)
	add(MetricServerRunQ, "us", false)
	add(MetricServerPreempt, "us", false)
	add(MetricServerInstr, "count", false)
	add(MetricServerWork, "count", false)
	for _, d := range []string{"ttft", "itl", "tpot"} {
		for _, s := range []string{"avg", "p50", "p90", "p95", "p99", "max"} {
			add(d+"_"+s, "us", false)
		}
	}
	add(MetricOutputTokensPS, "tokens/s", true)
	add(MetricGoodput, "req/s", true)
	add(MetricOutputTokensAvg, "count", false)
	add(MetricPrefixCacheHitRate, "fraction", true)
	add(MetricKVCacheUsageAvg, "fraction", false)
	add(MetricKVCacheUsageMax, "fraction", false)
	add(MetricRequestsRunningAvg, "count", false)
	add(MetricRequestsRunningMax, "count", false)
	add(MetricRequestsWaitingAvg, "count", false)
	add(MetricRequestsWaitingMax, "count", false)
	for _, s := range []string{"avg", "p50", "p90", "p95", "p99", "max"} {
		add("schedule_error_"+s, "us", false)
	}
	add(MetricMaxConcurrency, "count", true)
	add(MetricMaxRequestRate, "req/s", true)
	return out
}()

// IsSearchMetric says whether metric is the value of a search: such a
// figure exists at a search's result point only, and no other metric
// exists there.
func IsSearchMetric(metric string) bool {
	return metric == MetricMaxConcurrency || metric == MetricMaxRequestRate
}

// LookupMetric returns the description of a metric name.
func LookupMetric(name string) (MetricInfo, bool) {
	mi, ok := metricCatalogue[name]
	return mi, ok
}

// MetricNames lists every known metric, sorted.
func MetricNames() []string {
	names := make([]string, 0, len(metricCatalogue))
	for n := range metricCatalogue {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
