package result

import "github.com/perfscen/perfscen/runner/plan"

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

// getters compute each metric of plan.MetricNames from a Metrics.
var getters = map[string]func(m *Metrics) (float64, bool){
	plan.MetricThroughput:     always(func(m *Metrics) float64 { return m.Throughput }),
	plan.MetricLatencyAvg:     lat(func(m *Metrics) float64 { return m.LatencyAvgUs }),
	plan.MetricP50:            lat(func(m *Metrics) float64 { return m.P50Us }),
	plan.MetricP90:            lat(func(m *Metrics) float64 { return m.P90Us }),
	plan.MetricP95:            lat(func(m *Metrics) float64 { return m.P95Us }),
	plan.MetricP99:            lat(func(m *Metrics) float64 { return m.P99Us }),
	plan.MetricLatencyMax:     lat(func(m *Metrics) float64 { return m.LatencyMaxUs }),
	plan.MetricErrors:         finished(func(m *Metrics) float64 { return float64(m.Errors) }),
	plan.MetricErrorRate:      finished(func(m *Metrics) float64 { return m.ErrorRate }),
	plan.MetricServerQueue:    server(func(s *ServerStats) float64 { return s.QueueUs }),
	plan.MetricServerInput:    server(func(s *ServerStats) float64 { return s.ComputeInputUs }),
	plan.MetricServerInfer:    server(func(s *ServerStats) float64 { return s.ComputeInferUs }),
	plan.MetricServerOutput:   server(func(s *ServerStats) float64 { return s.ComputeOutputUs }),
	plan.MetricClientSendRecv: split(func(m *Metrics) float64 { return m.ClientSendRecvUs }),
	plan.MetricClientWait:     split(func(m *Metrics) float64 { return m.ClientWaitUs }),
	plan.MetricMaxConcurrency: searched(func(m *Metrics) *float64 { return m.MaxConcurrency }),
	plan.MetricMaxRequestRate: searched(func(m *Metrics) *float64 { return m.MaxRequestRate }),
}

// searched figures exist on a search's result point only.
func searched(f func(m *Metrics) *float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if v := f(m); v != nil {
			return *v, true
		}
		return 0, false
	}
}

// Value returns metric name of m; ok is false when the metric is unknown or
// has no data (no completed request, no server statistics).
func (m *Metrics) Value(name string) (v float64, ok bool) {
	get, found := getters[name]
	if !found {
		return 0, false
	}
	return get(m)
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
