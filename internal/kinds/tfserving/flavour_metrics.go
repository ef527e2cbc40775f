package tfserving

import (
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
)

// flavourMetrics are the embedded flavour's copies of TF Serving's
// per-model request count and request latency (servables/tensorflow/
// util.cc), served in TF Serving's Prometheus form.
type flavourMetrics struct {
	mu       sync.Mutex
	counts   map[[2]string]uint64     // model_name, status
	latency  map[[3]string]*histogram // model_name, API, entrypoint
	boundsUs []float64
}

type histogram struct {
	buckets []uint64 // per bound, not cumulative
	count   uint64
	sumUs   float64
}

// latencyBounds are TF Serving's request_latency buckets:
// Buckets::Exponential(10, 1.8, 33), in microseconds.
func latencyBounds() []float64 {
	b := make([]float64, 33)
	for i := range b {
		b[i] = 10 * math.Pow(1.8, float64(i))
	}
	return b
}

func newFlavourMetrics() *flavourMetrics {
	return &flavourMetrics{counts: map[[2]string]uint64{}, latency: map[[3]string]*histogram{}, boundsUs: latencyBounds()}
}

// record counts one request under its status, and its latency when it
// succeeded, as TF Serving does.
func (m *flavourMetrics) record(model, api, entrypoint string, e *apiErr, d time.Duration) {
	if model == "" {
		return
	}
	code := pb.Code_OK
	if e != nil {
		code = e.code
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[[2]string{model, code.String()}]++
	if e != nil {
		return
	}
	k := [3]string{model, api, entrypoint}
	h := m.latency[k]
	if h == nil {
		h = &histogram{buckets: make([]uint64, len(m.boundsUs))}
		m.latency[k] = h
	}
	us := float64(d) / float64(time.Microsecond)
	h.count++
	h.sumUs += us
	if i, _ := slices.BinarySearch(m.boundsUs, us); i < len(h.buckets) {
		h.buckets[i]++
	}
}

// write serves the figures in the Prometheus text format, TYPE lines
// only, as TF Serving's exporter writes them.
func (m *flavourMetrics) write(w io.Writer) {
	m.mu.Lock()
	counts := &dto.MetricFamily{Name: proto.String(metricRequests), Type: dto.MetricType_COUNTER.Enum()}
	for _, k := range slices.SortedFunc(maps.Keys(m.counts), cmpKeys2) {
		counts.Metric = append(counts.Metric, &dto.Metric{
			Label:   []*dto.LabelPair{label("model_name", k[0]), label("status", k[1])},
			Counter: &dto.Counter{Value: proto.Float64(float64(m.counts[k]))},
		})
	}
	lat := &dto.MetricFamily{Name: proto.String(metricLatency), Type: dto.MetricType_HISTOGRAM.Enum()}
	for _, k := range slices.SortedFunc(maps.Keys(m.latency), cmpKeys3) {
		h := m.latency[k]
		dh := &dto.Histogram{SampleCount: proto.Uint64(h.count), SampleSum: proto.Float64(h.sumUs)}
		var cum uint64
		for i, b := range m.boundsUs {
			cum += h.buckets[i]
			dh.Bucket = append(dh.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(cum)})
		}
		lat.Metric = append(lat.Metric, &dto.Metric{
			Label:     []*dto.LabelPair{label("model_name", k[0]), label("API", k[1]), label("entrypoint", k[2])},
			Histogram: dh,
		})
	}
	m.mu.Unlock()
	for _, f := range []*dto.MetricFamily{counts, lat} {
		if len(f.Metric) > 0 {
			expfmt.MetricFamilyToText(w, f)
		}
	}
}

func label(k, v string) *dto.LabelPair {
	return &dto.LabelPair{Name: proto.String(k), Value: proto.String(v)}
}

func cmpKeys2(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) }

func cmpKeys3(a, b [3]string) int {
	return strings.Compare(a[0]+"\x00"+a[1]+"\x00"+a[2], b[0]+"\x00"+b[1]+"\x00"+b[2])
}
