package result

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

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
	plan.MetricServerCPU:      process(func(p *ProcessStats) *float64 { return &p.CPUUs }),
	plan.MetricServerRunQ:     process(func(p *ProcessStats) *float64 { return p.RunQueueUs }),
	plan.MetricServerPreempt:  process(func(p *ProcessStats) *float64 { return p.PreemptUs }),
	plan.MetricServerInstr:    process(func(p *ProcessStats) *float64 { return p.Instructions }),
	plan.MetricServerWork:     process(func(p *ProcessStats) *float64 { return p.Work }),
	plan.MetricClientSendRecv: split(func(m *Metrics) float64 { return m.ClientSendRecvUs }),
	plan.MetricClientWait:     split(func(m *Metrics) float64 { return m.ClientWaitUs }),
	plan.MetricMaxConcurrency: searched(func(m *Metrics) *float64 { return m.MaxConcurrency }),
	plan.MetricMaxRequestRate: searched(func(m *Metrics) *float64 { return m.MaxRequestRate }),
}

// process figures exist where the server's process was measured, and a
// window with no inference has none.
func process(f func(p *ProcessStats) *float64) func(m *Metrics) (float64, bool) {
	return func(m *Metrics) (float64, bool) {
		if m.Process == nil || m.Process.Inferences <= 0 {
			return 0, false
		}
		if v := f(m.Process); v != nil {
			return *v, true
		}
		return 0, false
	}
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
// has no data (no completed request, no server statistics, or a figure
// the source did not carry: Absent).
func (m *Metrics) Value(name string) (v float64, ok bool) {
	get, found := getters[name]
	if !found || m.IsAbsent(metricKeys[name]) {
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

// metricKeys are the JSON keys of the fields behind each metric.
var metricKeys = map[string]string{
	plan.MetricThroughput: "throughput", plan.MetricLatencyAvg: "latency_avg_us",
	plan.MetricP50: "p50_us", plan.MetricP90: "p90_us", plan.MetricP95: "p95_us", plan.MetricP99: "p99_us",
	plan.MetricLatencyMax: "latency_max_us", plan.MetricErrors: "errors", plan.MetricErrorRate: "error_rate",
	plan.MetricClientSendRecv: "client_send_recv_us", plan.MetricClientWait: "client_wait_us",
}

// IsAbsent reports whether the figure with JSON key key was not carried
// by the source (see Absent).
func (m *Metrics) IsAbsent(key string) bool {
	return key != "" && slices.Contains(m.Absent, key)
}

// ServerAbsent and LLMAbsent prefix Absent's keys for the figures of the
// server and LLM blocks ("server.request_count", "llm.input_tokens",
// "llm.ttft.max_us"): an imported perf_analyzer CSV has the server's queue
// and compute times but none of its counts, a genai-perf CSV token rates
// but no token totals, perfscen's own LLM CSV percentiles but no maxima.
const (
	ServerAbsent = "server."
	LLMAbsent    = "llm."
)

// MarshalJSON leaves the absent figures out: a reader finds no key
// rather than a 0.
func (m Metrics) MarshalJSON() ([]byte, error) {
	type plain Metrics
	b, err := json.Marshal(plain(m))
	if err != nil || len(m.Absent) == 0 {
		return b, err
	}
	return m.dropAbsent(b, "")
}

// dropAbsent leaves out of the JSON object b the members whose key, under
// prefix, is absent, in nested objects too ("llm.ttft.max_us").
func (m *Metrics) dropAbsent(b []byte, prefix string) ([]byte, error) {
	return dropKeys(b, func(key string, v json.RawMessage) (json.RawMessage, bool, error) {
		key = prefix + key
		if m.IsAbsent(key) {
			return nil, false, nil
		}
		if len(v) > 0 && v[0] == '{' && m.absentUnder(key+".") {
			nested, err := m.dropAbsent(v, key+".")
			return nested, true, err
		}
		return v, true, nil
	})
}

// absentUnder reports whether some absent key lies under prefix.
func (m *Metrics) absentUnder(prefix string) bool {
	for _, k := range m.Absent {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// dropKeys rewrites the JSON object b through keep, which returns each
// member's new value and whether to keep it, in field order.
func dropKeys(b []byte, keep func(key string, v json.RawMessage) (json.RawMessage, bool, error)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		key, _ := k.(string)
		v, ok, err := keep(key, v)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
