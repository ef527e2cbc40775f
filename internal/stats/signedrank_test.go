package stats

import (
	"math"
	"math/rand/v2"
	"sort"
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

// Past exactSignedRankMax the p-value comes from the normal
// approximation: it agrees with the exact count where both can be had, and
// stays a probability where 2^n leaves float64 (a run of 2000 trials).
func TestSignedRankPLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := make([]float64, exactSignedRankMax)
	for i := range d {
		d[i] = rng.NormFloat64() + 0.1
	}
	exact := SignedRankP(d, true)
	rank2, observed := make([]int, len(d)), 0
	for i := range d {
		rank2[i] = 2 * (i + 1)
	}
	// The same ranks and signs, through the approximation directly.
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return math.Abs(d[idx[a]]) < math.Abs(d[idx[b]]) })
	for r, i := range idx {
		if d[i] > 0 {
			observed += 2 * (r + 1)
		}
	}
	if approx := signedRankNormal(rank2, observed); math.Abs(approx-exact) > 0.002 {
		t.Errorf("n = %d: exact p %.5f, normal approximation %.5f", len(d), exact, approx)
	}
	big := make([]float64, 2000)
	for i := range big {
		big[i] = float64(i%7 + 1)
		if i%2 == 1 {
			big[i] = -big[i]
		}
	}
	if p := SignedRankP(big, true); !(p > 0.3 && p < 0.7) {
		t.Errorf("2000 differences balanced around 0: p = %g, want about ½", p)
	}
	for i := range big {
		big[i] = math.Abs(big[i])
	}
	if p := SignedRankP(big, true); !(p >= 0 && p < 1e-12) {
		t.Errorf("2000 positive differences: p = %g, want ~0", p)
	}
}

// The bootstrap interval of a median holds the sample's median, and a
// higher level gives an interval at least as wide.
func TestBootstrapMedian(t *testing.T) {
	xs := []float64{9, 1, 5, 3, 7, 2, 8, 4, 6, 10, 11}
	lo95, hi95 := BootstrapMedian(xs, 2000, 0.95, rand.New(rand.NewPCG(1, 2)))
	lo99, hi99 := BootstrapMedian(xs, 2000, 0.99, rand.New(rand.NewPCG(1, 2)))
	if m := Median(xs); !(lo95 <= m && m <= hi95) || lo95 == hi95 {
		t.Errorf("95%% interval [%g, %g] around median %g", lo95, hi95, m)
	}
	if lo99 > lo95 || hi99 < hi95 {
		t.Errorf("99%% interval [%g, %g] narrower than 95%% [%g, %g]", lo99, hi99, lo95, hi95)
	}
}
