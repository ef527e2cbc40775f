package verdict

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// rngFor seeds a generator from a check's identity, so each interval is
// reproducible and independent of evaluation order.
func rngFor(parts ...string) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// medianInPlace sorts xs and returns its median.
func medianInPlace(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// bootstrapRatio returns the conf-level percentile interval of
// median(a)/median(b), resampling each arm independently.
func bootstrapRatio(a, b []float64, resamples int, conf float64, rng *rand.Rand) (lo, hi float64) {
	ra := make([]float64, len(a))
	rb := make([]float64, len(b))
	ratios := make([]float64, resamples)
	for i := range ratios {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		ratios[i] = medianInPlace(ra) / medianInPlace(rb)
	}
	slices.Sort(ratios)
	tail := (1 - conf) / 2
	return quantileSorted(ratios, tail), quantileSorted(ratios, 1-tail)
}

// quantileSorted interpolates linearly between order statistics.
func quantileSorted(s []float64, q float64) float64 {
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

// holm applies Holm's step-down procedure with per-test levels: tests are
// ordered by p/alpha and the j-th (from 0) of m is rejected while
// p·(m−j) ≤ alpha. With equal levels this is the classic Holm–Bonferroni
// correction; it keeps the chance of any false rejection at or below the
// largest level.
func holm(p, alpha []float64) []bool {
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
