package refserver

import (
	"math/rand/v2"
	"sync"
	"time"
)

// faultRNG is a model's seeded random source: fault decisions and jitter
// draw from it in request order, so a test with a fixed seed and a serial
// client sees the same faults on every run.
type faultRNG struct {
	mu   sync.Mutex
	seed uint64
	r    *rand.Rand
}

func newFaultRNG(seed uint64) *faultRNG {
	return &faultRNG{seed: seed, r: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// reseed restarts the sequence when the seed parameter changes.
func (f *faultRNG) reseed(seed uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seed != f.seed {
		f.seed = seed
		f.r = rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	}
}

// decide draws both fault outcomes for one request; both draws happen even
// at rate 0 so changing one rate does not shift the other's sequence.
func (f *faultRNG) decide(p *modelParams) (fail, drop bool) {
	f.mu.Lock()
	a, b := f.r.Float64(), f.r.Float64()
	f.mu.Unlock()
	return a < p.errorRate, b < p.dropRate
}

// jitter draws a uniform offset in [-j, +j], never making delay negative.
func (f *faultRNG) jitter(delay, j time.Duration) time.Duration {
	if j <= 0 {
		return 0
	}
	f.mu.Lock()
	u := f.r.Float64()*2 - 1
	f.mu.Unlock()
	d := time.Duration(u * float64(j))
	if delay+d < 0 {
		return -delay
	}
	return d
}

// stallRemaining is how long an execution starting at now must wait: every
// stallEvery period (counted from load) ends with a stallFor window in
// which the model serves nothing.
func stallRemaining(loaded, now time.Time, p *modelParams) time.Duration {
	if p.stallEvery <= 0 || p.stallFor <= 0 {
		return 0
	}
	phase := now.Sub(loaded) % p.stallEvery
	if phase < p.stallEvery-p.stallFor {
		return 0
	}
	return p.stallEvery - phase
}

// driftRemaining is the extra service time of an execution starting at
// now: none until driftAfter from load, then drift more for every second
// since, so a point's later windows get steadily slower than its first.
func driftRemaining(loaded, now time.Time, p *modelParams) time.Duration {
	if p.drift <= 0 {
		return 0
	}
	since := now.Sub(loaded) - p.driftAfter
	if since <= 0 {
		return 0
	}
	return time.Duration(since.Seconds() * float64(p.drift))
}
