package fleet

import (
	"time"
)

// Clock is a host's clock as the fleet reads it: Unix nanoseconds that
// advance with the monotonic clock from the moment the clock was made, so
// a step of the wall clock during a run (NTP) does not move a session's
// epoch. Skew is added to every reading: a fault injected by tests, so an
// agent can pretend its clock is off by a known amount.
type Clock struct {
	base time.Time
	Skew time.Duration
}

// NewClock starts a clock at now.
func NewClock(skew time.Duration) *Clock { return &Clock{base: time.Now(), Skew: skew} }

// NS is t on this clock.
func (c *Clock) NS(t time.Time) int64 {
	return c.base.UnixNano() + int64(t.Sub(c.base)) + int64(c.Skew)
}

// Now is the clock's reading now.
func (c *Clock) Now() int64 { return c.NS(time.Now()) }

// Time is the local time (with its monotonic reading) at which this clock
// reads ns.
func (c *Clock) Time(ns int64) time.Time {
	return c.base.Add(time.Duration(ns - c.base.UnixNano() - int64(c.Skew)))
}

// Sample is one round trip of a clock probe: the coordinator's clock when
// it sent the probe and when the answer came back, and the agent's clock
// when it answered.
type Sample struct {
	Sent, Agent, Received int64
}

// RTT is the sample's round trip.
func (s Sample) RTT() time.Duration { return time.Duration(s.Received - s.Sent) }

// Offset is the agent's clock minus the coordinator's as the sample tells
// it, assuming the answer was taken halfway through the round trip; the
// true offset lies within ± half the round trip of it, whatever the
// delays each way were.
func (s Sample) Offset() time.Duration {
	return time.Duration(s.Agent - (s.Sent+s.Received)/2)
}

// Estimate is an agent's clock offset (agent − coordinator) and the bound
// of its error.
type Estimate struct {
	Offset time.Duration
	// Error bounds |true offset − Offset|: half the round trip of the
	// sample it came from.
	Error time.Duration
	RTT   time.Duration
	// Samples is how many round trips were looked at.
	Samples int
}

// Estimator keeps an agent's recent clock samples and estimates its offset
// from the one with the shortest round trip (Cristian's method, as NTP's
// clock filter): the shortest trip has the least room for asymmetric
// delays, and its half-trip bounds the error.
type Estimator struct {
	window  int
	samples []Sample
}

// NewEstimator keeps the last window samples (at least 1).
func NewEstimator(window int) *Estimator { return &Estimator{window: max(window, 1)} }

// Add records a sample; samples whose answer came before their probe left
// (impossible on one clock) are dropped.
func (e *Estimator) Add(s Sample) {
	if s.Received < s.Sent {
		return
	}
	e.samples = append(e.samples, s)
	if len(e.samples) > e.window {
		e.samples = e.samples[len(e.samples)-e.window:]
	}
}

// Len is how many samples are held.
func (e *Estimator) Len() int { return len(e.samples) }

// Estimate is the current estimate; ok is false without samples.
func (e *Estimator) Estimate() (Estimate, bool) {
	if len(e.samples) == 0 {
		return Estimate{}, false
	}
	best := e.samples[0]
	for _, s := range e.samples[1:] {
		if s.RTT() < best.RTT() {
			best = s
		}
	}
	return Estimate{Offset: best.Offset(), Error: (best.RTT() + 1) / 2, RTT: best.RTT(), Samples: len(e.samples)}, true
}
