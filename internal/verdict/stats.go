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

// bootstrapRatio returns the conf-level percentile interval of
// median(a)/median(b), resampling each arm independently.
func bootstrapRatio(a, b []float64, resamples int, conf float64, rng *rand.Rand) (lo, hi float64) {
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
	return quantileSorted(ratios, tail), quantileSorted(ratios, 1-tail)
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
