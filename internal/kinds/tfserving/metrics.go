package tfserving

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perfscen/perfscen/internal/kinds"
)

// TF Serving's Prometheus names: its metric names with every character
// outside [a-zA-Z0-9_] turned into ':' (util/prometheus_exporter.cc), so
// /tensorflow/serving/request_count is :tensorflow:serving:request_count.
const (
	// promPath is PrometheusExporter::kPrometheusPath, where
	// --monitoring_config_file's prometheus_config serves by default.
	promPath = "/monitoring/prometheus/metrics"
	// metricRequests counts every request by model_name and status (the
	// error code's name: OK, INVALID_ARGUMENT, …).
	metricRequests = ":tensorflow:serving:request_count"
	// metricLatency is the histogram of successful requests' wall time in
	// microseconds, by model_name, API (Predict over gRPC, the method
	// "predict" over REST) and entrypoint (GRPC, REST).
	metricLatency = ":tensorflow:serving:request_latency"
)

// promStats reads a model's figures from TF Serving's Prometheus endpoint.
type promStats struct {
	url    string
	client *http.Client
}

// promFamilies scrapes and parses the endpoint. A body that is not the
// Prometheus text format is errNotProm: metrics_url names something else.
func (p *promStats) families(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics_url %s: %w", p.url, err)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", p.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", p.url, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("scraping %s: %s: %w", p.url, resp.Status, errNoMetricsPage)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", p.url, resp.Status)
	}
	fams, err := parseProm(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errNotProm, p.url, err)
	}
	return fams, nil
}

var errNotProm = fmt.Errorf("not Prometheus text")

// errNoMetricsPage is a metrics_url answering 404: what TF Serving does
// without --monitoring_config_file.
var errNoMetricsPage = fmt.Errorf("no metrics page")

// parseProm reads the Prometheus text exposition format. TF Serving's
// names begin with ':', which the classic name rules allow.
func parseProm(body []byte) (map[string]*dto.MetricFamily, error) {
	tp := expfmt.NewTextParser(model.UTF8Validation)
	return tp.TextToMetricFamilies(bytes.NewReader(body))
}

// counters are model's cumulative figures for requests that came in by
// entrypoint (GRPC or REST): successes and their total time from the
// latency histogram's count and sum (µs), failures from the request
// counter's non-OK statuses. TF Serving counts nothing else per model, so
// inference and execution counts, queue and compute times stay zero. The
// series appear at a model's first request: none yet is all zeros.
func promCounters(fams map[string]*dto.MetricFamily, modelName, entrypoint string) kinds.Counters {
	var c kinds.Counters
	var sumUs float64
	if f := fams[metricLatency]; f != nil {
		for _, m := range f.GetMetric() {
			l := labels(m)
			if l["model_name"] != modelName || !strings.EqualFold(l["API"], "predict") {
				continue
			}
			if ep, ok := l["entrypoint"]; ok && entrypoint != "" && ep != entrypoint {
				continue
			}
			h := m.GetHistogram()
			c.Success.Count += h.GetSampleCount()
			sumUs += h.GetSampleSum()
		}
	}
	if sumUs > 0 && !math.IsInf(sumUs, 0) {
		c.Success.Ns = uint64(sumUs * 1000)
		c.Success.StepNs = uint64(printedStep(sumUs) * 1000)
	}
	if f := fams[metricRequests]; f != nil {
		for _, m := range f.GetMetric() {
			l := labels(m)
			if l["model_name"] != modelName || l["status"] == "OK" {
				continue
			}
			if v := counterValue(m); v > 0 {
				c.Fail.Count += uint64(v)
			}
		}
	}
	return c
}

// printedStep is the step of the last significant digit a value was
// printed with, when the printing rounded it: TF Serving writes doubles
// with 6 significant digits ("1.23457e+10"), so a latency sum past 10^6
// µs moves in steps of 10 µs and more. 0 when the value shows more
// digits than that (it was not rounded to 6).
func printedStep(v float64) float64 {
	if v < 1e6 {
		return 0
	}
	digits := strings.TrimLeft(strings.Replace(strconv.FormatFloat(v, 'e', -1, 64), ".", "", 1), "0")
	if i := strings.IndexByte(digits, 'e'); i >= 0 {
		digits = digits[:i]
	}
	if len(digits) > 6 {
		return 0
	}
	return math.Pow(10, math.Floor(math.Log10(v))-5)
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// counterValue reads a sample of a family typed counter, or untyped when
// the exporter wrote no # TYPE line.
func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetUntyped().GetValue()
}
