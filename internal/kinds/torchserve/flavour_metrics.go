package torchserve

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tsStats are the flavour's TorchServe counters: per model and version
// label (requests naming no version count under "default"), successful
// predictions only, and the host-level status counts.
type tsStats struct {
	mu     sync.Mutex
	series map[seriesKey]*series
	byCode [3]float64 // 2XX, 4XX, 5XX
}

type seriesKey struct{ model, version string }

type series struct {
	requests, latencyUs, queueUs float64
}

func newTSStats() *tsStats { return &tsStats{series: map[seriesKey]*series{}} }

// prediction counts one successful prediction: its time from receipt to
// reply and its wait for a model instance.
func (s *tsStats) prediction(model, version string, latency, queue time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := seriesKey{model, version}
	e := s.series[k]
	if e == nil {
		e = &series{}
		s.series[k] = e
	}
	e.requests++
	e.latencyUs += float64(latency.Nanoseconds()) / 1e3
	e.queueUs += float64(queue.Nanoseconds()) / 1e3
}

func (s *tsStats) status(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case code >= 200 && code < 300:
		s.byCode[0]++
	case code >= 400 && code < 500:
		s.byCode[1]++
	case code >= 500:
		s.byCode[2]++
	}
}

// hostname is the hostname label, fixed so scrapes are reproducible.
const hostname = "perfscen-embedded"

// metrics serves GET /metrics in TorchServe's Prometheus text: its
// metric names, help lines and label order, label sets ending in ",}".
func (f *frontend) metrics(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		notFound(w)
		return
	}
	if r.Method != http.MethodGet {
		methodNotAllowed(w)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(f.stats.text()))
}

func (s *tsStats) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, name := range []string{"Requests2XX", "Requests4XX", "Requests5XX"} {
		fmt.Fprintf(&b, "# HELP %s Torchserve prometheus counter metric with unit: Count\n# TYPE %s counter\n", name, name)
		fmt.Fprintf(&b, "%s{Level=\"Host\",Hostname=\"%s\",} %s\n", name, hostname, javaDouble(s.byCode[i]))
	}
	keys := make([]seriesKey, 0, len(s.series))
	for k := range s.series {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		if c := strings.Compare(a.model, b.model); c != 0 {
			return c
		}
		return strings.Compare(a.version, b.version)
	})
	for _, m := range []struct {
		name, unit string
		value      func(*series) float64
	}{
		{metricRequests, "Count", func(e *series) float64 { return e.requests }},
		{metricLatency, "Microseconds", func(e *series) float64 { return e.latencyUs }},
		{metricQueue, "Microseconds", func(e *series) float64 { return e.queueUs }},
	} {
		fmt.Fprintf(&b, "# HELP %s Torchserve prometheus counter metric with unit: %s\n# TYPE %s counter\n", m.name, m.unit, m.name)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s{model_name=%q,model_version=%q,hostname=%q,} %s\n", m.name, k.model, k.version, hostname, javaDouble(m.value(s.series[k])))
		}
	}
	return b.String()
}

// javaDouble formats like Java's Double.toString for the values a
// counter holds: "16.0", "4893.499".
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
