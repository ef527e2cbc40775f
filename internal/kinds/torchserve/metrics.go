package torchserve

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/prom"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// TorchServe's per-model counters (metrics_mode=prometheus), labelled
// model_name, model_version and hostname. Requests to /predictions/m are
// counted under model_version="default", those to /predictions/m/v under
// "v": two series for one model. Failed predictions are not counted.
const (
	metricRequests = "ts_inference_requests_total"
	metricLatency  = "ts_inference_latency_microseconds" // receipt to response, queue included
	metricQueue    = "ts_queue_latency_microseconds"
)

// defaultVersionLabel is the model_version label of requests that name no
// version.
const defaultVersionLabel = "default"

// scrape reads the metrics API's Prometheus text: TorchServe's three
// per-model counters.
func (a *api) scrape(ctx context.Context) ([]prom.Sample, error) {
	r, err := a.do(ctx, http.MethodGet, a.ep.metrics+"/metrics")
	if err != nil {
		return nil, err
	}
	if r.status != http.StatusOK {
		return nil, &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: "metrics", HTTPStatus: r.status, Message: messageOf(r)}
	}
	samples, err := parseMetrics(r.body)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: "metrics", Err: fmt.Errorf("GET %s/metrics: %w", a.ep.metrics, err)}
	}
	return samples, nil
}

// parseMetrics parses Prometheus text exposition (TorchServe's label sets
// end with ",}", which the format allows), keeping the ts_* counters.
func parseMetrics(b []byte) ([]prom.Sample, error) {
	return prom.Parse(bytes.NewReader(b), func(name string) bool {
		return name == metricRequests || name == metricLatency || name == metricQueue
	})
}

// countersOf sums the model's three counters over the series labelled
// model_name=name and model_version=version (every hostname). A model
// that has served nothing yet has no series: its counters are zero.
func countersOf(samples []prom.Sample, name, version string) kinds.Counters {
	match := map[string]string{"model_name": name, "model_version": version}
	sum := func(metric string) float64 {
		v, _ := prom.Sum(samples, metric, match)
		return v
	}
	n := toUint(sum(metricRequests))
	latency := toUint(sum(metricLatency) * 1000)
	queue := min(toUint(sum(metricQueue)*1000), latency)
	// TorchServe splits a request's server time into its queue wait and
	// the rest (the frontend's hand-off to a worker, the handler, the
	// reply); the rest stands in the compute-infer column, as the
	// server's time not spent queued. Executions (batches) are not
	// reported: zero.
	return kinds.Counters{
		Inferences:   n,
		Success:      kinds.Duration{Count: n, Ns: latency},
		Queue:        kinds.Duration{Count: n, Ns: queue},
		ComputeInfer: kinds.Duration{Count: n, Ns: latency - queue},
	}
}

// hasCounters reports whether the scrape holds TorchServe's request
// counter for any model: a metrics API in log mode, or another server's
// metrics, has none (nor has TorchServe before its first prediction).
func hasCounters(samples []prom.Sample) bool {
	_, ok := prom.Sum(samples, metricRequests, nil)
	return ok
}

func toUint(v float64) uint64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(v))
}
