package refserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Prometheus metrics with Triton's names (core src/metrics.cc and
// metric_model_reporter.cc), served as text on GET /metrics of the metrics
// listener. Values are read from the models' statistics at scrape time, so
// they agree with the statistics extension. Triton labels failures with a
// reason; this server does not classify them and omits the label, as Triton
// releases before failure reasons did. There are no GPU or CPU gauges: the
// server uses no GPU and reports no host figures it does not measure.

type metricFamily struct {
	name, help, kind string
	value            func(s ModelStats, m *loadedModel) float64
}

var metricFamilies = []metricFamily{
	{"nv_inference_request_success", "Number of successful inference requests, all batch sizes", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return float64(s.Success.Count) }},
	{"nv_inference_request_failure", "Number of failed inference requests, all batch sizes", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return float64(s.Fail.Count) }},
	{"nv_inference_count", "Number of inferences performed (does not include cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return float64(s.InferenceCount) }},
	{"nv_inference_exec_count", "Number of model executions performed (does not include cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return float64(s.ExecutionCount) }},
	{"nv_inference_request_duration_us", "Cumulative inference request duration in microseconds (includes cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return us(s.Success.NS + s.Fail.NS) }},
	{"nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds (includes cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return us(s.Queue.NS) }},
	{"nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds (does not include cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return us(s.ComputeInput.NS) }},
	{"nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds (does not include cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return us(s.ComputeInfer.NS) }},
	{"nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds (does not include cached requests)", "counter",
		func(s ModelStats, _ *loadedModel) float64 { return us(s.ComputeOutput.NS) }},
	{"nv_inference_pending_request_count", "Instantaneous number of pending requests awaiting execution per-model.", "gauge",
		func(_ ModelStats, m *loadedModel) float64 { return float64(m.sched.pending()) }},
}

func us(ns uint64) float64 { return float64(ns / 1000) }

// writeMetrics renders every family over the loaded models, in the text
// exposition format (version 0.0.4).
func (s *Server) writeMetrics(b *bytes.Buffer) {
	models := s.repo.loadedModels()
	snaps := make([]ModelStats, len(models))
	for i, m := range models {
		snaps[i] = m.stats.snapshot()
	}
	for _, f := range metricFamilies {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		for i, m := range models {
			fmt.Fprintf(b, "%s{model=%s,version=%s} %s\n", f.name, promLabel(snaps[i].Name), promLabel(snaps[i].Version),
				strconv.FormatFloat(f.value(snaps[i], m), 'f', -1, 64))
		}
	}
}

// promLabel quotes a label value, escaping as the text format requires.
func promLabel(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v) + `"`
}

// MetricsHandler serves /metrics as Triton's metrics port does.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var b bytes.Buffer
		s.writeMetrics(&b)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.Write(b.Bytes())
	})
}
