package engine

import (
	"math"
	"testing"
	"time"
)

func TestConstantPacer(t *testing.T) {
	tests := []struct {
		name     string
		p        ConstantPacer
		elapsed  time.Duration
		sent     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{"first is due at once", ConstantPacer{Rate: 10}, 0, 0, 0, false},
		{"second waits a gap", ConstantPacer{Rate: 10}, 0, 1, 100 * time.Millisecond, false},
		{"partway through a gap", ConstantPacer{Rate: 10}, 30 * time.Millisecond, 1, 70 * time.Millisecond, false},
		{"overdue sends now", ConstantPacer{Rate: 10}, 1 * time.Second, 3, 0, false},
		{"exactly due", ConstantPacer{Rate: 4}, 500 * time.Millisecond, 2, 0, false},
		{"fractional rate", ConstantPacer{Rate: 0.5}, 0, 1, 2 * time.Second, false},
		{"max reached", ConstantPacer{Rate: 10, Max: 3}, 0, 3, 0, true},
		{"below max", ConstantPacer{Rate: 10, Max: 3}, 0, 2, 200 * time.Millisecond, false},
		{"zero rate stops", ConstantPacer{}, 0, 0, 0, true},
		{"negative rate stops", ConstantPacer{Rate: -1}, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, stop := tt.p.Pace(tt.elapsed, tt.sent)
			if wait != tt.wantWait || stop != tt.wantStop {
				t.Errorf("Pace(%v, %d) = (%v, %v), want (%v, %v)", tt.elapsed, tt.sent, wait, stop, tt.wantWait, tt.wantStop)
			}
		})
	}
}

func TestPoissonPacerReproducibleAndMean(t *testing.T) {
	a := NewPoissonPacer(1000, 42, 0)
	b := NewPoissonPacer(1000, 42, 0)
	c := NewPoissonPacer(1000, 43, 0)
	same := true
	for n := uint64(0); n < 100; n++ {
		if a.Due(n) != b.Due(n) {
			t.Fatalf("same seed differs at %d: %v vs %v", n, a.Due(n), b.Due(n))
		}
		if a.Due(n) != c.Due(n) {
			same = false
		}
	}
	if same {
		t.Error("different seeds gave the same schedule")
	}
	// Mean gap over 50k arrivals is 1 ms within 2 % (the standard error of
	// the mean of 50k exponentials is 0.45 %).
	const n = 50000
	mean := float64(a.Due(n)) / n / float64(time.Millisecond)
	if math.Abs(mean-1) > 0.02 {
		t.Errorf("mean gap = %.4f ms, want about 1 ms", mean)
	}
	if a.Due(0) != 0 {
		t.Errorf("first arrival at %v, want 0", a.Due(0))
	}
}

func TestPoissonPacerMonotonicAcrossBlocks(t *testing.T) {
	p := NewPoissonPacer(5000, 7, 0)
	prev := time.Duration(-1)
	for n := uint64(poissonBlock - 5); n < poissonBlock+5; n++ {
		d := p.Due(n)
		if d < prev {
			t.Fatalf("Due(%d) = %v < Due(%d) = %v", n, d, n-1, prev)
		}
		prev = d
	}
	if got, want := p.Due(poissonBlock), p.period; got != want {
		t.Errorf("Due(block) = %v, want period %v", got, want)
	}
}

func TestPoissonPacerPace(t *testing.T) {
	p := NewPoissonPacer(100, 1, 5)
	d3 := p.Due(3)
	tests := []struct {
		elapsed  time.Duration
		sent     uint64
		wantWait time.Duration
		wantStop bool
	}{
		{0, 3, d3, false},
		{d3, 3, 0, false},
		{d3 + time.Second, 3, 0, false},
		{0, 5, 0, true},
	}
	for _, tt := range tests {
		wait, stop := p.Pace(tt.elapsed, tt.sent)
		if wait != tt.wantWait || stop != tt.wantStop {
			t.Errorf("Pace(%v, %d) = (%v, %v), want (%v, %v)", tt.elapsed, tt.sent, wait, stop, tt.wantWait, tt.wantStop)
		}
	}
	if _, stop := NewPoissonPacer(0, 1, 0).Pace(0, 0); !stop {
		t.Error("zero-rate Poisson pacer did not stop")
	}
}
