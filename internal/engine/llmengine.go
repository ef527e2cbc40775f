package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/result"
)

// engineScrape is one reading of an LLM engine's figures and when it was
// taken.
type engineScrape struct {
	at      time.Time
	reading kinds.EngineReading
}

// engineScraper samples an LLM engine's figures (kinds.EngineGauges) in
// the background, like gpuScraper: windows and points then take the
// readings that fell in their time. Scrapes are a few a second, so a
// mutex is fine; nothing on the request path touches it.
type engineScraper struct {
	src      kinds.EngineGauges
	interval time.Duration

	mu            sync.Mutex
	samples       []engineScrape
	failed, tries int
	lastErr       error

	cancel context.CancelFunc
	done   chan struct{}
}

func startEngineScraper(ctx context.Context, src kinds.EngineGauges, interval time.Duration) *engineScraper {
	ctx, cancel := context.WithCancel(ctx)
	e := &engineScraper{src: src, interval: interval, cancel: cancel, done: make(chan struct{})}
	// A first reading before any load: the counters' starting point, and
	// a wrong metrics_url is noted even when the run is short.
	e.scrape(ctx)
	go e.loop(ctx)
	return e
}

func (e *engineScraper) loop(ctx context.Context) {
	defer close(e.done)
	t := time.NewTicker(e.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.scrape(ctx)
	}
}

func (e *engineScraper) scrape(ctx context.Context) {
	r, err := e.src.ScrapeEngine(ctx)
	if ctx.Err() != nil {
		return // closing: a scrape cut short is no failure
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Stamped under the lock, so the readings stay in time order however
	// the background and a settling scrape interleave.
	at := time.Now()
	e.tries++
	if err != nil {
		e.failed++
		e.lastErr = err
		return
	}
	e.samples = append(e.samples, engineScrape{at: at, reading: r})
}

// close stops scraping after one last reading, so the counters of a
// window that just ended have a reading at or after its end.
func (e *engineScraper) close() {
	if e == nil {
		return
	}
	select {
	case <-e.done:
		return
	default:
	}
	e.cancel()
	<-e.done
}

// settle takes a reading now: the end of a window is then covered
// however long the scrape interval.
func (e *engineScraper) settle(ctx context.Context) {
	if e == nil {
		return
	}
	select {
	case <-e.done:
		return
	default:
	}
	e.scrape(ctx)
}

// note says how scraping went when any scrape failed.
func (e *engineScraper) note() string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed == 0 {
		return ""
	}
	return fmt.Sprintf("engine metrics (%s): %d of %d scrape(s) failed, so the engine's figures are missing or partial; last error: %v",
		e.src.EngineMetricsURL(), e.failed, e.tries, e.lastErr)
}

// window aggregates model's readings in [from, to]: gauges averaged and
// maxed over the readings inside, counters as their growth between their
// values at from and at to (at). nil when there is neither.
func (e *engineScraper) window(model string, from, to time.Time) *result.EngineMetrics {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var in []kinds.EngineFigures
	for i := range e.samples {
		s := &e.samples[i]
		if f, ok := s.reading.For(model); ok && !s.at.Before(from) && !s.at.After(to) {
			in = append(in, f)
		}
	}
	bi, li := e.at(model, from), e.at(model, to)
	if len(in) == 0 && (bi < 0 || li <= bi) {
		return nil // no reading, and no counter moved within the window
	}
	var base, last *kinds.EngineFigures
	if bi >= 0 && li >= 0 {
		b, _ := e.samples[bi].reading.For(model)
		l, _ := e.samples[li].reading.For(model)
		base, last = &b, &l
	}
	m := &result.EngineMetrics{Samples: len(in)}
	m.Running = gaugeOf(in, func(f *kinds.EngineFigures) *float64 { return f.Running })
	m.Waiting = gaugeOf(in, func(f *kinds.EngineFigures) *float64 { return f.Waiting })
	m.KVCacheUsage = gaugeOf(in, func(f *kinds.EngineFigures) *float64 { return f.KVCacheUsage })
	if base != nil && last != nil && base.PrefixQueries != nil && last.PrefixQueries != nil && base.PrefixHits != nil && last.PrefixHits != nil {
		q, h := *last.PrefixQueries-*base.PrefixQueries, *last.PrefixHits-*base.PrefixHits
		if q >= 0 && h >= 0 { // counters going back: the server restarted
			m.PrefixCache = &result.PrefixCache{Queries: q, Hits: h}
		}
	}
	return m
}

// at is model's counters as of t: the first reading within one interval
// after t (a window's end is read just after it closes), else the last one
// before. Adjacent windows share the reading at their common bound, so
// nothing is counted twice or lost between them.
// It returns the reading's index, -1 when there is none.
func (e *engineScraper) at(model string, t time.Time) int {
	before := -1
	for i := range e.samples {
		s := &e.samples[i]
		if _, ok := s.reading.For(model); !ok {
			continue
		}
		if s.at.Before(t) {
			before = i
			continue
		}
		if s.at.Sub(t) <= e.interval {
			return i
		}
		break
	}
	return before
}

func gaugeOf(list []kinds.EngineFigures, pick func(f *kinds.EngineFigures) *float64) *result.Gauge {
	var g result.Gauge
	n := 0
	for i := range list {
		v := pick(&list[i])
		if v == nil {
			continue
		}
		g.Avg += *v
		g.Max = max(g.Max, *v)
		n++
	}
	if n == 0 {
		return nil
	}
	g.Avg /= float64(n)
	return &g
}

// maxSeries bounds a point's engine series in the result.
const maxSeries = 300

// series is model's gauges in [from, to], as offsets from from, thinned
// evenly to at most maxSeries readings.
func (e *engineScraper) series(model string, from, to time.Time) []result.EngineSample {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []result.EngineSample
	for _, s := range e.samples {
		f, ok := s.reading.For(model)
		if !ok || s.at.Before(from) || s.at.After(to) {
			continue
		}
		out = append(out, result.EngineSample{Offset: s.at.Sub(from).Seconds(), Running: f.Running, Waiting: f.Waiting, KVCacheUsage: f.KVCacheUsage})
	}
	if len(out) <= maxSeries {
		return out
	}
	thin := make([]result.EngineSample, maxSeries)
	for i := range thin {
		thin[i] = out[i*(len(out)-1)/(maxSeries-1)]
	}
	return thin
}

// sumEngines is the engine figures of a mix's members in one window,
// each model's own: their prefix-cache counters and request gauges
// summed, KV-cache usage (each engine's own cache) their mean and
// largest.
func sumEngines(list []*result.EngineMetrics) *result.EngineMetrics {
	var out *result.EngineMetrics
	kvN := 0
	for _, e := range list {
		if e == nil {
			continue
		}
		if out == nil {
			out = &result.EngineMetrics{}
		}
		out.Samples = max(out.Samples, e.Samples)
		for _, g := range []struct{ dst, src **result.Gauge }{{&out.Running, &e.Running}, {&out.Waiting, &e.Waiting}} {
			if *g.src == nil {
				continue
			}
			if *g.dst == nil {
				*g.dst = &result.Gauge{}
			}
			(*g.dst).Avg += (*g.src).Avg
			(*g.dst).Max += (*g.src).Max
		}
		if e.KVCacheUsage != nil {
			if out.KVCacheUsage == nil {
				out.KVCacheUsage = &result.Gauge{}
			}
			out.KVCacheUsage.Avg += e.KVCacheUsage.Avg
			out.KVCacheUsage.Max = max(out.KVCacheUsage.Max, e.KVCacheUsage.Max)
			kvN++
		}
		if e.PrefixCache != nil {
			if out.PrefixCache == nil {
				out.PrefixCache = &result.PrefixCache{}
			}
			out.PrefixCache.Queries += e.PrefixCache.Queries
			out.PrefixCache.Hits += e.PrefixCache.Hits
		}
	}
	if kvN > 1 {
		out.KVCacheUsage.Avg /= float64(kvN)
	}
	return out
}

// mergeEngine folds per-window engine figures: gauges' means weighted by
// their readings, maxima maxed, counters' growth summed.
func mergeEngine(list []*result.EngineMetrics) *result.EngineMetrics {
	var out result.EngineMetrics
	gauge := func(dst **result.Gauge, src *result.Gauge, n, total int) {
		if src == nil {
			return
		}
		if *dst == nil {
			*dst = &result.Gauge{}
		}
		(*dst).Avg += src.Avg * float64(n) / float64(total)
		(*dst).Max = max((*dst).Max, src.Max)
	}
	any := false
	for _, e := range list {
		any = any || e != nil
	}
	if !any {
		return nil
	}
	// A gauge's mean over the readings that had it.
	weights := func(pick func(e *result.EngineMetrics) *result.Gauge) int {
		n := 0
		for _, e := range list {
			if e != nil && pick(e) != nil {
				n += e.Samples
			}
		}
		return n
	}
	picks := []func(e *result.EngineMetrics) **result.Gauge{
		func(e *result.EngineMetrics) **result.Gauge { return &e.Running },
		func(e *result.EngineMetrics) **result.Gauge { return &e.Waiting },
		func(e *result.EngineMetrics) **result.Gauge { return &e.KVCacheUsage },
	}
	for _, pick := range picks {
		w := weights(func(e *result.EngineMetrics) *result.Gauge { return *pick(e) })
		for _, e := range list {
			if e != nil {
				gauge(pick(&out), *pick(e), e.Samples, max(w, 1))
			}
		}
	}
	for _, e := range list {
		if e == nil {
			continue
		}
		out.Samples += e.Samples
		if e.PrefixCache != nil {
			if out.PrefixCache == nil {
				out.PrefixCache = &result.PrefixCache{}
			}
			out.PrefixCache.Queries += e.PrefixCache.Queries
			out.PrefixCache.Hits += e.PrefixCache.Hits
		}
	}
	return &out
}
