package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSignedRankP(t *testing.T) {
	// Hollander & Wolfe's depression scores, the example of R's
	// wilcox.test: x − y, paired; V = 40, exact one-sided p = 10/512.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	for _, tc := range []struct {
		name    string
		d       []float64
		greater bool
		want    float64
	}{
		{"hollander-wolfe greater", d, true, 10.0 / 512},
		{"hollander-wolfe less", d, false, 1 - 7.0/512}, // P(V ≤ 40) = 1 − P(V ≥ 41)
		// |1| and |−1| tie at mid-rank 1.5; the positive sum is 4.5, which
		// 3 of the 8 sign patterns reach.
		{"ties share a mid-rank", []float64{1, -1, 2}, true, 3.0 / 8},
		{"zeros are dropped", []float64{0, 0, 1, 2, 3}, true, 1.0 / 8},
		{"all positive", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, true, 1.0 / 1024},
		{"nothing but zeros", []float64{0, 0}, true, 1},
		{"empty", nil, false, 1},
	} {
		if got := SignedRankP(tc.d, tc.greater); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: p = %.6g, want %.6g", tc.name, got, tc.want)
		}
	}
}

// Under the null (symmetric differences) the test rejects at α no more
// often than α: the exact distribution holds at small n.
func TestSignedRankPLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const runs, n, alpha = 4000, 20, 0.05
	rejected := 0
	for range runs {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		if SignedRankP(d, true) <= alpha {
			rejected++
		}
	}
	// Binomial(4000, 0.05) stays below 240 (4.4 sd above its mean) but
	// for one run in 10^5.
	if rejected > 240 || rejected < 160 {
		t.Errorf("rejected %d of %d nulls at α = %g", rejected, runs, alpha)
	}
}

func FuzzSignedRankP(f *testing.F) {
	f.Add(1.0, -2.0, 3.0, 0.0, true)
	f.Fuzz(func(t *testing.T, a, b, c, d float64, greater bool) {
		p := SignedRankP([]float64{a, b, c, d}, greater)
		if !(p > 0 && p <= 1) {
			t.Fatalf("p = %g for %v", p, []float64{a, b, c, d})
		}
	})
}
