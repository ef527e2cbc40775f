package result

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// histogram decodes the trial's latency histogram (microseconds).
func (t *Trial) histogram() (*hdrhistogram.Histogram, error) {
	if t.Histogram == "" {
		return nil, fmt.Errorf("trial %d has no latency histogram", t.Index)
	}
	h, err := hdrhistogram.Decode([]byte(t.Histogram))
	if err != nil {
		return nil, fmt.Errorf("trial %d: decoding its latency histogram: %w", t.Index, err)
	}
	return h, nil
}

// ShareWithin is the share of the trial's requests, failed ones counted
// as missing it, that completed within us microseconds: the goodput share
// for a latency SLO. ok is false when the trial has no requests or no
// histogram.
func (t *Trial) ShareWithin(us float64) (share float64, ok bool) {
	sent := t.Metrics.Requests + t.Metrics.Errors
	if sent == 0 {
		return 0, false
	}
	h, err := t.histogram()
	if err != nil {
		return 0, false
	}
	var good int64
	for _, b := range h.Distribution() {
		// A bucket counts when all of it lies within the bound: a request
		// at the bound's edge is never counted good by rounding.
		if float64(b.To) <= us {
			good += b.Count
		}
	}
	return float64(good) / float64(sent), true
}

// KeptPercentileUs is the q-th percentile (0 < q < 100) of the latencies
// of every kept trial together, as perf_analyzer reports a percentile over
// its merged windows; ok is false without trials or histograms.
func (p *Point) KeptPercentileUs(q float64) (float64, bool) {
	var merged *hdrhistogram.Histogram
	for i := range p.Trials {
		h, err := p.Trials[i].histogram()
		if err != nil {
			return 0, false
		}
		if merged == nil {
			merged = h
			continue
		}
		merged.Merge(h)
	}
	if merged == nil || merged.TotalCount() == 0 {
		return 0, false
	}
	v := float64(merged.ValueAtQuantile(q))
	lo, hi := p.Summary.LatencyMinUs, p.Summary.LatencyMaxUs
	if hi > 0 {
		v = min(max(v, lo), hi)
	}
	return v, true
}

// DecodeHistogram reads a latency histogram as written in a trial (HDR
// V2 compressed, base64, microseconds) into its bars: each bar's middle
// value and its count, in increasing order, empty bars left out.
func DecodeHistogram(s string) (us []float64, counts []int64, err error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, nil, fmt.Errorf("decoding a latency histogram: %w", err)
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			us = append(us, float64(b.From+b.To)/2)
			counts = append(counts, b.Count)
		}
	}
	return us, counts, nil
}
