package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/result"
)

type fakeEngine struct{}

func (fakeEngine) EngineMetricsURL() string { return "http://engine/metrics" }
func (fakeEngine) ScrapeEngine(context.Context) (kinds.EngineReading, error) {
	return nil, errors.New("refused")
}

func reading(model string, running, kv, queries, hits float64) kinds.EngineReading {
	return kinds.EngineReading{model: {Running: &running, KVCacheUsage: &kv, PrefixQueries: &queries, PrefixHits: &hits}}
}

// Gauges are averaged over the readings inside a window; counters grow
// from their value at its start to their value at its end, each the first
// reading within one interval after the bound, so adjacent windows share
// their bound's reading and nothing is counted twice.
func TestEngineWindows(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	e := &engineScraper{src: fakeEngine{}, interval: 250 * time.Millisecond, samples: []engineScrape{
		{at(0), reading("m", 2, 0.1, 100, 50)},
		{at(300), reading("m", 4, 0.3, 400, 250)},
		{at(700), reading("m", 6, 0.5, 900, 600)},
		{at(1050), reading("m", 8, 0.7, 1000, 650)},
		{at(1400), reading("other", 1, 0.9, 5, 5)},
	}}
	w1 := e.window("m", at(0), at(1000))
	if w1 == nil || w1.Samples != 3 || w1.Running.Avg != 4 || w1.Running.Max != 6 || w1.KVCacheUsage.Max != 0.5 {
		t.Fatalf("window 1: %+v", w1)
	}
	// Start: the reading at 0; end: the reading at 1050 (within 250 ms).
	if pc := w1.PrefixCache; pc == nil || pc.Queries != 900 || pc.Hits != 600 {
		t.Errorf("window 1 prefix cache %+v", w1.PrefixCache)
	}
	w2 := e.window("m", at(1000), at(2000))
	if pc := w2.PrefixCache; w2 == nil || pc == nil || pc.Queries != 0 || w2.Samples != 1 {
		t.Errorf("window 2 %+v", w2)
	}
	if r, ok := w1.PrefixCache.HitRate(); !ok || r != 600.0/900 {
		t.Errorf("hit rate %v %v", r, ok)
	}
	if w := e.window("m", at(5000), at(6000)); w != nil {
		t.Errorf("a window without readings: %+v", w)
	}
	m := mergeEngine([]*result.EngineMetrics{w1, nil, w2})
	if m.Samples != 4 || m.Running.Avg != 5 || m.Running.Max != 8 || m.PrefixCache.Queries != 900 {
		t.Errorf("merged %+v, running %+v", m, m.Running)
	}
	s := e.series("m", at(300), at(1050))
	if len(s) != 3 || s[0].Offset != 0 || *s[2].Running != 8 || s[2].Offset != 0.75 {
		t.Errorf("series %+v", s)
	}
	e.scrape(context.Background())
	if n := e.note(); n == "" {
		t.Error("a failed scrape left no note")
	}
}

func TestEngineSeriesThinned(t *testing.T) {
	e := &engineScraper{src: fakeEngine{}, interval: time.Millisecond}
	t0 := time.Unix(0, 0)
	for i := range 1000 {
		e.samples = append(e.samples, engineScrape{t0.Add(time.Duration(i) * time.Millisecond), reading("", float64(i), 0, 0, 0)})
	}
	s := e.series("m", t0, t0.Add(time.Second))
	if len(s) != maxSeries || *s[0].Running != 0 || *s[len(s)-1].Running != 999 {
		t.Errorf("%d readings from %v to %v", len(s), *s[0].Running, *s[len(s)-1].Running)
	}
}

// A mix's whole figures: its members' prefix-cache counters and request
// gauges summed, each engine's KV-cache usage averaged.
func TestSumEngines(t *testing.T) {
	a := &result.EngineMetrics{Samples: 4, Running: &result.Gauge{Avg: 2, Max: 3}, KVCacheUsage: &result.Gauge{Avg: 0.2, Max: 0.5},
		PrefixCache: &result.PrefixCache{Queries: 100, Hits: 50}}
	b := &result.EngineMetrics{Samples: 5, Running: &result.Gauge{Avg: 1, Max: 4}, KVCacheUsage: &result.Gauge{Avg: 0.4, Max: 0.3},
		PrefixCache: &result.PrefixCache{Queries: 300, Hits: 250}}
	s := sumEngines([]*result.EngineMetrics{a, nil, b})
	if s.Running.Avg != 3 || s.Running.Max != 7 || s.KVCacheUsage.Avg < 0.3-1e-9 || s.KVCacheUsage.Avg > 0.3+1e-9 || s.KVCacheUsage.Max != 0.5 ||
		s.PrefixCache.Queries != 400 || s.PrefixCache.Hits != 300 || s.Waiting != nil {
		t.Errorf("sum %+v running %+v kv %+v", s, s.Running, s.KVCacheUsage)
	}
	if sumEngines([]*result.EngineMetrics{nil}) != nil {
		t.Error("figures from no member")
	}
}
