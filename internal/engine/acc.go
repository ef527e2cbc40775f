package engine

import (
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfscen/perfscen/runner/result"
)

// Histogram geometry: microseconds from 1 µs to one hour at 3 significant
// figures; slower requests are clamped to the top and counted in max.
const (
	histLowestUs  = 1
	histHighestUs = int64(time.Hour / time.Microsecond)
	histSigFigs   = 3
)

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowestUs, histHighestUs, histSigFigs)
}

// acc accumulates the successful requests of one window (or the merge of
// several). Only the aggregator goroutine touches it.
type acc struct {
	start, end time.Duration // window bounds, offsets from the epoch

	hist  *hdrhistogram.Histogram
	n     int64 // successful requests
	errs  int64
	sumUs float64 // exact sum for the mean; the histogram gives percentiles
	// meanUs and m2 are Welford's running mean and sum of squared
	// deviations from it: sumSq/n − mean² loses every digit of the
	// variance once latencies are large against their spread (seconds
	// with microsecond jitter).
	meanUs float64
	m2     float64
	minLat time.Duration
	maxLat time.Duration

	sendRecv time.Duration
	wait     time.Duration

	// Decoupled models: data responses and the summed time to the first.
	decoupled  bool
	responses  int64
	firstN     int64
	firstSumUs float64

	sequences int64 // successful requests that ended a sequence
	delayed   int64 // successful requests that waited for a free worker (request-rate modes)

	unreachable int64      // failures to reach the server (transport errors)
	classes     classTally // failures by class

	llm *llmAcc // generation requests only

	// sendErr is how late each open-loop request left against its
	// schedule (send − due), failed ones included: nil in closed-loop
	// modes, where nothing is scheduled.
	sendErr *durHist
	// sendWait is the least precise wait of those sends (realtime.go).
	sendWait waitKind
}

func newAcc(start time.Duration) *acc {
	return &acc{start: start, hist: newHist(), minLat: -1}
}

func (a *acc) add(s *sample) {
	if s.paced {
		if a.sendErr == nil {
			h := newDurHist()
			a.sendErr = &h
		}
		a.sendErr.add(s.Sent - s.sched)
		a.sendWait = a.sendWait.weaker(s.wait)
	}
	if s.Err != nil {
		a.errs++
		a.classes.add(s.Err)
		return
	}
	lat := s.latency()
	if lat < 0 {
		lat = 0
	}
	us := float64(lat) / float64(time.Microsecond)
	a.n++
	a.sumUs += us
	d := us - a.meanUs
	a.meanUs += d / float64(a.n)
	a.m2 += d * (us - a.meanUs)
	if a.minLat < 0 || lat < a.minLat {
		a.minLat = lat
	}
	if lat > a.maxLat {
		a.maxLat = lat
	}
	v := max(int64(lat/time.Microsecond), histLowestUs)
	if v > histHighestUs {
		v = histHighestUs
	}
	_ = a.hist.RecordValue(v) // in range by construction
	a.sendRecv += s.SendRecv
	a.wait += s.Wait
	if s.seqEnd {
		a.sequences++
	}
	if s.queued {
		a.delayed++
	}
	if s.Decoupled {
		a.decoupled = true
	}
	a.responses += int64(s.Responses)
	if s.Responses > 0 {
		a.firstN++
		a.firstSumUs += float64(max(s.First-s.sched, 0)) / float64(time.Microsecond)
	}
	if s.llm != nil {
		if a.llm == nil {
			a.llm = newLLMAcc(false)
		}
		a.llm.add(s.llm)
	}
}

// merge folds b into a; bounds widen to cover both.
func (a *acc) merge(b *acc) {
	if b.hist != nil { // nil: a window report's, merged by MergeWindows
		a.hist.Merge(b.hist)
	}
	a.mergeMoments(b)
	a.n += b.n
	a.errs += b.errs
	a.sumUs += b.sumUs
	if b.minLat >= 0 && (a.minLat < 0 || b.minLat < a.minLat) {
		a.minLat = b.minLat
	}
	a.maxLat = max(a.maxLat, b.maxLat)
	a.sendRecv += b.sendRecv
	a.wait += b.wait
	a.decoupled = a.decoupled || b.decoupled
	a.responses += b.responses
	a.sequences += b.sequences
	a.delayed += b.delayed
	a.firstN += b.firstN
	a.firstSumUs += b.firstSumUs
	a.unreachable += b.unreachable
	a.classes.merge(&b.classes)
	if b.llm != nil {
		if a.llm == nil {
			a.llm = newLLMAcc(false)
		}
		a.llm.merge(b.llm)
	}
	if b.sendErr != nil {
		if a.sendErr == nil {
			h := newDurHist()
			a.sendErr = &h
		}
		a.sendErr.merge(b.sendErr)
		a.sendWait = a.sendWait.weaker(b.sendWait)
	}
	a.start = min(a.start, b.start)
	a.end = max(a.end, b.end)
}

// mergeMoments folds b's running mean and squared deviations into a's
// (Chan, Golub and LeVeque's pairwise update); a.n is still a's alone.
func (a *acc) mergeMoments(b *acc) {
	if b.n == 0 {
		return
	}
	if a.n == 0 {
		a.meanUs, a.m2 = b.meanUs, b.m2
		return
	}
	na, nb := float64(a.n), float64(b.n)
	n := na + nb
	d := b.meanUs - a.meanUs
	a.meanUs += d * nb / n
	a.m2 += b.m2 + d*d*na*nb/n
}

// metrics computes the figures of the accumulated requests over dur.
func (a *acc) metrics(batch int, dur time.Duration) result.Metrics {
	m := result.Metrics{Requests: a.n, Errors: a.errs, Sequences: a.sequences, Delayed: a.delayed}
	if a.llm != nil {
		m.LLM = a.llm.metrics(dur)
	}
	if a.sendErr != nil {
		d := a.sendErr.dist()
		m.ScheduleError = &d
		m.ScheduleWait = a.sendWait.String()
	}
	if dur > 0 {
		m.Throughput = float64(a.n) * float64(max(batch, 1)) / dur.Seconds()
	}
	if tot := a.n + a.errs; tot > 0 {
		m.ErrorRate = float64(a.errs) / float64(tot)
	}
	if a.n == 0 {
		return m
	}
	n := float64(a.n)
	mean := a.sumUs / n
	m.LatencyAvgUs = mean
	if v := a.m2 / n; v > 0 {
		m.LatencyStdUs = math.Sqrt(v)
	}
	m.LatencyMinUs = float64(a.minLat) / float64(time.Microsecond)
	m.LatencyMaxUs = float64(a.maxLat) / float64(time.Microsecond)
	m.P50Us = a.quantileUs(50)
	m.P90Us = a.quantileUs(90)
	m.P95Us = a.quantileUs(95)
	m.P99Us = a.quantileUs(99)
	m.ClientSendRecvUs = float64(a.sendRecv) / n / float64(time.Microsecond)
	m.ClientWaitUs = float64(a.wait) / n / float64(time.Microsecond)
	if a.decoupled {
		// perf_analyzer's decoupled figures: latency runs to the final
		// response; first-response latency and response throughput apart.
		m.Responses = a.responses
		if dur > 0 {
			m.ResponseThroughput = float64(a.responses) / dur.Seconds()
		}
		if a.firstN > 0 {
			m.FirstResponseAvgUs = a.firstSumUs / float64(a.firstN)
		}
	}
	return m
}

// quantileUs reads a percentile from the histogram, clamped to the exact
// extremes so rounding to a bucket never reports a value outside them.
func (a *acc) quantileUs(p float64) float64 {
	v := float64(a.hist.ValueAtPercentile(p))
	lo := float64(a.minLat) / float64(time.Microsecond)
	hi := float64(a.maxLat) / float64(time.Microsecond)
	return min(max(v, lo), hi)
}

// stabilityLatencyUs is perf_analyzer's stabilizing latency: the average, or
// the given percentile when set.
func (a *acc) stabilityLatencyUs(percentile int) float64 {
	if a.n == 0 {
		return 0
	}
	if percentile > 0 {
		return a.quantileUs(float64(percentile))
	}
	return a.sumUs / float64(a.n)
}

// encodeHist returns the histogram in HDR V2 compressed form, base64.
func (a *acc) encodeHist() (string, error) {
	b, err := a.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encoding latency histogram: %w", err)
	}
	return string(b), nil
}
