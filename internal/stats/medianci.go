package stats

import (
	"math"
	"sort"
)

// MedianCI is the distribution-free confidence interval of the median of
// xs: the order statistics x(k) and x(n−k+1) with the largest k whose
// coverage, 1 − 2·P(Binomial(n, ½) ≤ k−1), is at least conf. It assumes
// nothing of the shape of the data, only that the values are independent,
// as a point's trials (its windows) are. With too few values for conf the
// interval is [min, max] and the coverage returned is what it achieves
// (3 values: 75%, 5: 93.75%, 6: 96.9%).
func MedianCI(xs []float64, conf float64) (lo, hi, coverage float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n == 1 {
		return s[0], s[0], 0
	}
	// cdf[j] = P(B ≤ j) for B ~ Binomial(n, ½), built from log-binomials
	// so large n does not overflow.
	cov := func(k int) float64 {
		var tail float64
		for j := 0; j <= k-1; j++ {
			lg, _ := math.Lgamma(float64(n + 1))
			la, _ := math.Lgamma(float64(j + 1))
			lb, _ := math.Lgamma(float64(n - j + 1))
			tail += math.Exp(lg - la - lb - float64(n)*math.Ln2)
		}
		return 1 - 2*tail
	}
	k := 1
	for k+1 <= n/2 && cov(k+1) >= conf {
		k++
	}
	return s[k-1], s[n-k], cov(k)
}
