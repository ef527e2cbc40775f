package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/prom"
	"github.com/perfscen/perfscen/runner/result"
)

// Triton's GPU gauges (protocol.md §8), labelled by gpu_uuid.
const (
	gpuUtil  = "nv_gpu_utilization"
	gpuUsed  = "nv_gpu_memory_used_bytes"
	gpuTotal = "nv_gpu_memory_total_bytes"
	gpuPower = "nv_gpu_power_usage"
)

// gpuSample is one scrape summed over GPUs: utilization is the mean over
// GPUs, power and memory are totals over GPUs.
type gpuSample struct {
	at                 time.Time
	util, power        float64
	used, total        float64
	uuids              []string
	hasUtil, hasMemory bool
}

func gpuFromProm(list []prom.Sample) (gpuSample, bool) {
	var g gpuSample
	uuids := map[string]bool{}
	nUtil := 0
	for _, s := range list {
		uuids[s.Labels["gpu_uuid"]] = true
		switch s.Name {
		case gpuUtil:
			g.util += s.Value
			nUtil++
		case gpuPower:
			g.power += s.Value
		case gpuUsed:
			g.used += s.Value
			g.hasMemory = true
		case gpuTotal:
			g.total += s.Value
			g.hasMemory = true
		}
	}
	if nUtil > 0 {
		g.util /= float64(nUtil)
		g.hasUtil = true
	}
	for u := range uuids {
		if u != "" {
			g.uuids = append(g.uuids, u)
		}
	}
	sort.Strings(g.uuids)
	return g, len(list) > 0
}

// errNoGPU is a successful scrape of a server that reports no GPUs.
var errNoGPU = errors.New("no nv_gpu_* metrics")

func isTritonMetric(name string) bool { return strings.HasPrefix(name, "nv_") }

func isGPUMetric(name string) bool {
	return name == gpuUtil || name == gpuUsed || name == gpuTotal || name == gpuPower
}

// aggregateGPU folds the scrapes of a window the way perf_analyzer does
// (measurements_metrics.md): utilization and power averaged, memory used at
// its maximum, total memory as seen (its maximum, which is constant).
func aggregateGPU(list []gpuSample) *result.GPUMetrics {
	if len(list) == 0 {
		return nil
	}
	var m result.GPUMetrics
	for _, g := range list {
		m.UtilizationAvg += g.util
		m.PowerAvgWatts += g.power
		m.MemoryUsedMax = max(m.MemoryUsedMax, g.used)
		m.MemoryTotalMax = max(m.MemoryTotalMax, g.total)
	}
	m.UtilizationAvg /= float64(len(list))
	m.PowerAvgWatts /= float64(len(list))
	return &m
}

// gpuScraper polls a Prometheus endpoint in the background. Scrapes are
// rare (about one a second), so a mutex is fine here; nothing on the
// request path touches it.
type gpuScraper struct {
	url      string
	client   *http.Client
	interval time.Duration

	mu      sync.Mutex
	samples []gpuSample
	lastErr error
	// failed and tries count scrapes, for the run's note.
	failed, tries int
	uuids         []string

	cancel context.CancelFunc
	done   chan struct{}
}

// startGPUScraper scrapes url with hc (nil: a plain client) every interval
// until close.
func startGPUScraper(ctx context.Context, hc *http.Client, url string, interval time.Duration) *gpuScraper {
	ctx, cancel := context.WithCancel(ctx)
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	g := &gpuScraper{url: url, client: hc, interval: interval, cancel: cancel, done: make(chan struct{})}
	// The first scrape is made before the load starts: a short run could
	// otherwise end (and cancel it) before a wrong metrics_url answered,
	// and the URL would go unmentioned.
	g.record(g.scrape(ctx))
	go g.loop(ctx)
	return g
}

func (g *gpuScraper) loop(ctx context.Context) {
	defer close(g.done)
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := g.scrape(ctx)
		if ctx.Err() != nil {
			return // closing: a scrape cut short is no failure
		}
		g.record(s, err)
	}
}

// record counts one scrape's outcome.
func (g *gpuScraper) record(s gpuSample, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tries++
	if errors.Is(err, errNoGPU) {
		g.lastErr = nil
	} else if err != nil {
		g.lastErr = err
		g.failed++
	} else {
		g.samples = append(g.samples, s)
		if len(s.uuids) > 0 {
			g.uuids = s.uuids
		}
	}
}

func (g *gpuScraper) scrape(ctx context.Context) (gpuSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url, nil)
	if err != nil {
		return gpuSample{}, fmt.Errorf("metrics url %s: %w", g.url, err)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return gpuSample{}, fmt.Errorf("scraping %s: %w", g.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return gpuSample{}, fmt.Errorf("scraping %s: %s", g.url, resp.Status)
	}
	at := time.Now()
	list, err := prom.Parse(resp.Body, isTritonMetric)
	if err != nil {
		return gpuSample{}, fmt.Errorf("scraping %s: %w", g.url, err)
	}
	if len(list) == 0 {
		return gpuSample{}, fmt.Errorf("scraping %s: no nv_* metrics", g.url)
	}
	var gpu []prom.Sample
	for _, p := range list {
		if isGPUMetric(p.Name) {
			gpu = append(gpu, p)
		}
	}
	s, ok := gpuFromProm(gpu)
	if !ok {
		// Triton's metrics without GPU gauges: a server without GPUs
		// (or started with --allow-gpu-metrics=false). Nothing to record.
		return gpuSample{}, errNoGPU
	}
	s.at = at
	return s, nil
}

// window aggregates the scrapes taken in [from, to]; nil when none.
func (g *gpuScraper) window(from, to time.Time) *result.GPUMetrics {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var in []gpuSample
	for _, s := range g.samples {
		if !s.at.Before(from) && !s.at.After(to) {
			in = append(in, s)
		}
	}
	return aggregateGPU(in)
}

// describe names the GPUs seen, for result.Environment.GPU.
// count is how many GPUs the server's metrics name.
func (g *gpuScraper) count() int {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.uuids)
}

func (g *gpuScraper) describe() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.uuids, ",")
}

// note says how scraping went when any scrape failed, for the run's
// notes: a failing metrics_url must not go unmentioned.
func (g *gpuScraper) note() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed == 0 {
		return ""
	}
	msg := fmt.Sprintf("metrics_url: %d of %d scrape(s) failed, so GPU figures are missing or partial", g.failed, g.tries)
	if g.lastErr != nil {
		msg += "; last error: " + g.lastErr.Error()
	}
	return msg
}

func (g *gpuScraper) close() {
	if g == nil {
		return
	}
	g.cancel()
	<-g.done
}
