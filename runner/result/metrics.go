package result

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
)

// MetricInfo describes a metric: its unit and which direction is better.
type MetricInfo struct {
	Name         string
	Unit         string // "infer/s", "us", "count", "fraction"
	HigherBetter bool
	get          func(m *Metrics) (float64, bool)
}

func server(f func(s *ServerStats) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.Server == nil || m.Server.Reset {
			return 0, false
		}
		return f(m.Server), true
	}
}

func always(f func(m *Metrics) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) { return f(m), true }
}

// error figures are absent when no request finished either way: "0 errors
// out of 0" is no evidence that requests succeed.
func finished(f func(m *Metrics) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.Requests == 0 && m.Errors == 0 && m.Throughput == 0 && m.P50Us == 0 {
			return 0, false
		}
		return f(m), true
	}
}

// latency values are absent when nothing completed. Imported perf_analyzer
// CSV rows carry latencies but no request count: a nonzero latency figure
// is itself evidence of completed requests.
func lat(f func(m *Metrics) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.Requests == 0 && m.LatencyAvgUs == 0 && m.P50Us == 0 && m.P99Us == 0 {
			return 0, false
		}
		return f(m), true
	}
}

var metrics = map[string]MetricInfo{
	MetricThroughput:     {Unit: "infer/s", HigherBetter: true, get: always(func(m *Metrics) float64 { return m.Throughput })},
	MetricLatencyAvg:     {Unit: "us", get: lat(func(m *Metrics) float64 { return m.LatencyAvgUs })},
	MetricP50:            {Unit: "us", get: lat(func(m *Metrics) float64 { return m.P50Us })},
	MetricP90:            {Unit: "us", get: lat(func(m *Metrics) float64 { return m.P90Us })},
	MetricP95:            {Unit: "us", get: lat(func(m *Metrics) float64 { return m.P95Us })},
	MetricP99:            {Unit: "us", get: lat(func(m *Metrics) float64 { return m.P99Us })},
	MetricLatencyMax:     {Unit: "us", get: lat(func(m *Metrics) float64 { return m.LatencyMaxUs })},
	MetricErrors:         {Unit: "count", get: finished(func(m *Metrics) float64 { return float64(m.Errors) })},
	MetricErrorRate:      {Unit: "fraction", get: finished(func(m *Metrics) float64 { return m.ErrorRate })},
	MetricServerQueue:    {Unit: "us", get: server(func(s *ServerStats) float64 { return s.QueueUs })},
	MetricServerInput:    {Unit: "us", get: server(func(s *ServerStats) float64 { return s.ComputeInputUs })},
	MetricServerInfer:    {Unit: "us", get: server(func(s *ServerStats) float64 { return s.ComputeInferUs })},
	MetricServerOutput:   {Unit: "us", get: server(func(s *ServerStats) float64 { return s.ComputeOutputUs })},
	MetricClientSendRecv: {Unit: "us", get: split(func(m *Metrics) float64 { return m.ClientSendRecvUs })},
	MetricClientWait:     {Unit: "us", get: split(func(m *Metrics) float64 { return m.ClientWaitUs })},
}

// split values are absent where no client split was measured: a request
// always spends some time sending, receiving or waiting, so both at zero
// is an import without the split (genai-perf, perf_analyzer's dynamic
// gRPC), not a measurement of zero.
func split(f func(m *Metrics) float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.ClientSendRecvUs == 0 && m.ClientWaitUs == 0 {
			return 0, false
		}
		return lat(f)(m)
	}
}

func init() {
	for name, mi := range metrics {
		mi.Name = name
		metrics[name] = mi
	}
}

// Lookup returns the description of a metric name.
func Lookup(name string) (MetricInfo, bool) {
	mi, ok := metrics[name]
	return mi, ok
}

// MetricNames lists every known metric, sorted.
func MetricNames() []string {
	names := make([]string, 0, len(metrics))
	for n := range metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Value returns metric name of m; ok is false when the metric is unknown or
// has no data (no completed request, no server statistics).
func (m *Metrics) Value(name string) (v float64, ok bool) {
	mi, found := metrics[name]
	if !found {
		return 0, false
	}
	return mi.get(m)
}
