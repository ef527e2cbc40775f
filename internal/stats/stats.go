// Package stats holds the statistics perfscen's verdicts rest on: robust
// summaries (median, log-scale spread), Student's t, the minimum detectable
// effect of a prediction-interval gate, a bootstrap interval for a ratio of
// medians, and Holm's multiple-test correction. baseline and verdict both
// use them; nothing here knows about runs or checks.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// medianEfficiency scales a standard deviation into the standard error of
// a sample median (sqrt(pi/2) for normal data); run summaries use medians
// so a single bad trial cannot move them.
const medianEfficiency = 1.2533

// Median returns the median of xs (NaN when empty); xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MeanSD returns the mean and the sample standard deviation (0 for n < 2).
func MeanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// CV is the coefficient of variation of xs (0 when undefined).
func CV(xs []float64) float64 {
	m, sd := MeanSD(xs)
	if len(xs) < 2 || m == 0 {
		return 0
	}
	return sd / math.Abs(m)
}

// Positive reports whether every value is > 0, which the log-scale
// statistics need.
func Positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return len(xs) > 0
}

// LogSD is the sample standard deviation of log(xs); xs must be positive.
func LogSD(xs []float64) float64 {
	ls := make([]float64, len(xs))
	for i, x := range xs {
		ls[i] = math.Log(x)
	}
	_, sd := MeanSD(ls)
	return sd
}

// LogMedianSE is the standard error of the log of a median of n trials
// whose log values spread with sdLog; a single value is its own median.
func LogMedianSE(sdLog float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	if n == 1 {
		return sdLog
	}
	return medianEfficiency * sdLog / math.Sqrt(float64(n))
}

// TQuantile is the p-quantile of Student's t with df degrees of freedom.
func TQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}

// TCDF is the distribution function of Student's t with df degrees of freedom.
func TCDF(x float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.CDF(x)
}

// DefaultPower is the detection probability MDE figures are quoted at.
const DefaultPower = 0.8

// MDE is the smallest relative change a one-sided prediction-interval gate
// at confidence conf detects with probability power, given k history runs
// and the predictive log-scale standard deviation sd.
func MDE(sd float64, k int, conf, power float64) float64 {
	if k < 2 || !(sd > 0) {
		return 0
	}
	z := distuv.UnitNormal.Quantile(power)
	return math.Expm1((TQuantile(conf, k-1) + z) * sd)
}

// BootstrapRatio returns the conf-level percentile interval of
// median(a)/median(b), resampling each arm independently.
func BootstrapRatio(a, b []float64, resamples int, conf float64, rng *rand.Rand) (lo, hi float64) {
	sa := append([]float64(nil), a...)
	sb := append([]float64(nil), b...)
	slices.Sort(sa)
	slices.Sort(sb)
	ca := make([]int, len(sa))
	cb := make([]int, len(sb))
	ratios := make([]float64, resamples)
	for i := range ratios {
		ratios[i] = resampledMedian(sa, ca, rng) / resampledMedian(sb, cb, rng)
	}
	slices.Sort(ratios)
	tail := (1 - conf) / 2
	return QuantileSorted(ratios, tail), QuantileSorted(ratios, 1-tail)
}

// resampledMedian draws len(sorted) indexes with replacement and returns
// the median of the drawn values. Counting draws per rank and walking the
// ranks avoids sorting every resample.
func resampledMedian(sorted []float64, counts []int, rng *rand.Rand) float64 {
	n := len(sorted)
	clear(counts)
	for range n {
		counts[rng.IntN(n)]++
	}
	lowPos, highPos := (n-1)/2, n/2 // 0-based ranks of the middle values
	var low float64
	seen := 0
	for r, k := range counts {
		if k == 0 {
			continue
		}
		if seen <= lowPos && lowPos < seen+k {
			low = sorted[r]
		}
		if seen <= highPos && highPos < seen+k {
			return (low + sorted[r]) / 2
		}
		seen += k
	}
	return low
}

// QuantileSorted interpolates linearly between order statistics.
func QuantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

// Holm applies Holm's step-down procedure with per-test levels: tests are
// ordered by p/alpha and the j-th (from 0) of m is rejected while
// p·(m−j) ≤ alpha. With equal levels this is the classic Holm–Bonferroni
// correction; it keeps the chance of any false rejection at or below the
// largest level.
func Holm(p, alpha []float64) []bool {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return p[idx[x]]/alpha[idx[x]] < p[idx[y]]/alpha[idx[y]] })
	rej := make([]bool, m)
	for j, i := range idx {
		if p[i]*float64(m-j) > alpha[i] {
			break
		}
		rej[i] = true
	}
	return rej
}

// BootstrapMedian returns the conf-level percentile interval of the median
// of xs, resampling its values with replacement.
func BootstrapMedian(xs []float64, resamples int, conf float64, rng *rand.Rand) (lo, hi float64) {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	counts := make([]int, len(s))
	meds := make([]float64, resamples)
	for i := range meds {
		meds[i] = resampledMedian(s, counts, rng)
	}
	slices.Sort(meds)
	tail := (1 - conf) / 2
	return QuantileSorted(meds, tail), QuantileSorted(meds, 1-tail)
}
