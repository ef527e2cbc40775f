package engine

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// A Pacer decides when the next request of an open-loop load is due. It is a
// pure function of the time elapsed since the load began and the number of
// requests already sent: wait is how long to sleep before sending the next
// one (0 when it is due or overdue) and stop ends the load.
type Pacer interface {
	Pace(elapsed time.Duration, sent uint64) (wait time.Duration, stop bool)
	// Due is the scheduled offset of request n (0-based) from the start.
	Due(n uint64) time.Duration
}

// ConstantPacer sends Rate requests per second, evenly spaced; Max > 0
// stops after Max requests.
type ConstantPacer struct {
	Rate float64
	Max  uint64
}

var _ Pacer = ConstantPacer{}

// Due implements Pacer.
func (p ConstantPacer) Due(n uint64) time.Duration {
	if p.Rate <= 0 {
		return 0
	}
	return time.Duration(float64(n) * float64(time.Second) / p.Rate)
}

// Pace implements Pacer.
func (p ConstantPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	return pace(p, p.Rate, p.Max, elapsed, sent)
}

func pace(p Pacer, rate float64, max uint64, elapsed time.Duration, sent uint64) (time.Duration, bool) {
	if rate <= 0 || (max > 0 && sent >= max) {
		return 0, true
	}
	if due := p.Due(sent); due > elapsed {
		return due - elapsed, false
	}
	return 0, false
}

// PoissonPacer sends requests with exponentially distributed gaps of mean
// 1/Rate, the arrivals of a Poisson process. The gaps come from a seeded
// generator and are precomputed, so a schedule is reproducible and Pace stays
// pure; the precomputed block repeats once exhausted (as perf_analyzer's
// schedule does), shifted by its total length.
type PoissonPacer struct {
	Rate float64
	Max  uint64
	// offsets[i] is the scheduled offset of request i within one block;
	// period is the offset the block after it starts at.
	offsets []time.Duration
	period  time.Duration
}

var _ Pacer = PoissonPacer{}

// poissonBlock is long enough that repetition is invisible in practice
// (at 1000 req/s it spans about 65 s) while costing 512 KiB.
const poissonBlock = 1 << 16

// NewPoissonPacer precomputes the schedule for rate from seed.
func NewPoissonPacer(rate float64, seed uint64, max uint64) PoissonPacer {
	p := PoissonPacer{Rate: rate, Max: max}
	if rate <= 0 {
		return p
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p.offsets = make([]time.Duration, poissonBlock)
	var t float64 // seconds
	for i := range p.offsets {
		p.offsets[i] = time.Duration(t * float64(time.Second))
		t += rng.ExpFloat64() / rate
	}
	p.period = time.Duration(math.Round(t * float64(time.Second)))
	return p
}

// Due implements Pacer.
func (p PoissonPacer) Due(n uint64) time.Duration {
	if len(p.offsets) == 0 {
		return 0
	}
	k := uint64(len(p.offsets))
	return time.Duration(n/k)*p.period + p.offsets[n%k]
}

// Pace implements Pacer.
func (p PoissonPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	return pace(p, p.Rate, p.Max, elapsed, sent)
}

// IntervalsPacer replays a schedule of gaps between consecutive sends,
// looping over it (perf_analyzer's --request-intervals): request 0 is due
// at once, request n+1 a gap of Intervals[n mod len] after request n.
type IntervalsPacer struct {
	// offsets[i] is request i's offset within one pass; period is one
	// pass's length, where the next pass starts.
	offsets []time.Duration
	period  time.Duration
}

var _ Pacer = IntervalsPacer{}

// NewIntervalsPacer prepares the schedule of gaps iv.
func NewIntervalsPacer(iv []time.Duration) IntervalsPacer {
	p := IntervalsPacer{offsets: make([]time.Duration, len(iv))}
	for i, d := range iv {
		p.offsets[i] = p.period
		p.period += d
	}
	return p
}

// Due implements Pacer.
func (p IntervalsPacer) Due(n uint64) time.Duration {
	k := uint64(len(p.offsets))
	if k == 0 {
		return 0
	}
	return time.Duration(n/k)*p.period + p.offsets[n%k]
}

// Pace implements Pacer; a schedule of no time at all sends nothing.
func (p IntervalsPacer) Pace(elapsed time.Duration, sent uint64) (time.Duration, bool) {
	if p.period <= 0 {
		return 0, true
	}
	if due := p.Due(sent); due > elapsed {
		return due - elapsed, false
	}
	return 0, false
}

// newPacer picks the pacer for a request-rate point of load ld sent at
// rate (an agent's share of ld.Rate under a coordinator).
func newPacer(ld plan.Load, rate float64, seed uint64) Pacer {
	switch ld.Distribution {
	case plan.Poisson:
		return NewPoissonPacer(rate, seed, 0)
	case plan.Intervals, plan.TraceSchedule:
		// A trace is its gaps, replayed once (its request count is the
		// session's budget).
		return NewIntervalsPacer(ld.Intervals)
	}
	return ConstantPacer{Rate: rate}
}
