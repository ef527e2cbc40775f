package fleet

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Whatever the delays each way, the true offset lies within the
// estimate's error bound; and the estimate takes the shortest round trip,
// whose bound is the tightest.
func TestEstimateBoundsTheTrueOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		offset := time.Duration(rng.Int64N(int64(10*time.Second))) - 5*time.Second
		e := NewEstimator(16)
		var rtts []time.Duration
		sent := int64(1_000_000_000)
		for range 20 {
			out := time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
			back := time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond)) // asymmetric
			s := Sample{Sent: sent, Agent: sent + int64(out) + int64(offset), Received: sent + int64(out+back)}
			e.Add(s)
			rtts = append(rtts, s.RTT())
			sent += int64(time.Second)
		}
		best := slices.Min(rtts[len(rtts)-16:])
		est, ok := e.Estimate()
		if !ok {
			t.Fatal("no estimate")
		}
		if d := est.Offset - offset; d > est.Error || d < -est.Error {
			t.Fatalf("trial %d: offset %v estimated %v ± %v", trial, offset, est.Offset, est.Error)
		}
		if est.Samples != 16 || est.RTT != best {
			t.Fatalf("trial %d: %d samples, round trip %v, the shortest of the last 16 %v", trial, est.Samples, est.RTT, best)
		}
	}
}

// The estimator forgets samples beyond its window, so a clock that drifts
// is followed; impossible samples are dropped.
func TestEstimatorWindow(t *testing.T) {
	e := NewEstimator(2)
	e.Add(Sample{Sent: 0, Agent: 500, Received: 10})    // offset 495, rtt 10
	e.Add(Sample{Sent: 100, Agent: 700, Received: 200}) // offset 550, rtt 100
	e.Add(Sample{Sent: 300, Agent: 900, Received: 350}) // offset 575, rtt 50
	e.Add(Sample{Sent: 400, Agent: 0, Received: 399})   // answered before asked: dropped
	est, _ := e.Estimate()
	if est.Offset != 575 || est.Error != 25 || est.Samples != 2 {
		t.Fatalf("%+v", est)
	}
	if _, ok := NewEstimator(4).Estimate(); ok {
		t.Fatal("an estimate without samples")
	}
}

// A skewed clock reads skew ahead, and converts its readings back to the
// local times they stand for.
func TestClockSkew(t *testing.T) {
	plain, skewed := NewClock(0), NewClock(3*time.Second)
	now := time.Now()
	if d := time.Duration(skewed.NS(now) - plain.NS(now)); d < 3*time.Second-time.Millisecond || d > 3*time.Second+time.Millisecond {
		t.Fatalf("skewed clock %v ahead", d)
	}
	for _, c := range []*Clock{plain, skewed} {
		if got := c.Time(c.NS(now)); !got.Equal(now) {
			t.Errorf("Time(NS(t)) = %v, want %v", got, now)
		}
	}
}
