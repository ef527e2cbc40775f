package baseline

import (
	"math"
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
