package stats

import (
	"math"
	"testing"
)

func TestMedianCI(t *testing.T) {
	tests := []struct {
		n        int
		conf     float64
		lo, hi   float64 // values are 1..n, so order statistics are their ranks
		coverage float64
	}{
		{n: 3, conf: 0.95, lo: 1, hi: 3, coverage: 0.75},
		{n: 5, conf: 0.95, lo: 1, hi: 5, coverage: 0.9375},
		{n: 6, conf: 0.95, lo: 1, hi: 6, coverage: 0.96875},
		{n: 10, conf: 0.95, lo: 2, hi: 9, coverage: 0.978515625},
		{n: 20, conf: 0.95, lo: 6, hi: 15, coverage: 0.958610535},
		{n: 10, conf: 0.5, lo: 4, hi: 7, coverage: 0.65625},
	}
	for _, tc := range tests {
		xs := make([]float64, tc.n)
		for i := range xs {
			xs[tc.n-1-i] = float64(i + 1) // reversed: MedianCI sorts
		}
		lo, hi, cov := MedianCI(xs, tc.conf)
		if lo != tc.lo || hi != tc.hi || math.Abs(cov-tc.coverage) > 1e-6 {
			t.Errorf("n=%d conf=%g: [%g, %g] at %.9f, want [%g, %g] at %.9f", tc.n, tc.conf, lo, hi, cov, tc.lo, tc.hi, tc.coverage)
		}
	}
	if lo, hi, cov := MedianCI([]float64{7}, 0.95); lo != 7 || hi != 7 || cov != 0 {
		t.Errorf("one value: [%g, %g] at %g", lo, hi, cov)
	}
}
