// Package changepoint finds the runs where a performance series shifted:
// E-divisive with means (Matteson & James 2014, "A nonparametric approach
// for multiple change point analysis of multivariate data"), the method
// Hunter and Otava use on benchmark histories.
//
// The series is split by binary segmentation. In each segment the split
// τ that maximizes the energy statistic
//
//	q(τ) = m·n/(m+n) · ( 2/(m·n) Σ|x−y| − 1/C(m,2) Σ|x−x'| − 1/C(n,2) Σ|y−y'| )
//
// (x the m values before τ, y the n values from τ on, α = 1) is the
// candidate; the candidate of largest q over all segments is kept when a
// permutation test says it is significant: the segment's values are
// shuffled Permutations times and the p-value is the share of shuffles
// whose best q reaches the observed one. The shuffles come from a seeded
// generator, so one series always gives the same answer.
package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Options tune the detection; the zero value means the defaults.
type Options struct {
	// MinSize is the fewest values on either side of a change (default 3):
	// one or two runs are not yet a level.
	MinSize int
	// Alpha is the significance level (default 0.01).
	Alpha float64
	// Permutations is the number of shuffles per test (default 199).
	Permutations int
	// Seed seeds the shuffles (default 1).
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.MinSize < 2 {
		o.MinSize = 3
	}
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Change is one detected change point: the series shifts at Index (the
// first value of the new level).
type Change struct {
	Index int
	// Q is the energy statistic of the split; P its permutation p-value.
	Q, P float64
	// Before and After are the means of the segments on either side, as
	// segmented when the change was found.
	Before, After float64
}

// Detect returns the change points of xs in index order. NaN values are
// not allowed (leave missing runs out of the series).
func Detect(xs []float64, opt Options) []Change {
	opt = opt.withDefaults()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	cuts := []int{0, len(xs)} // segment bounds, sorted
	var out []Change
	for {
		best := Change{Index: -1}
		var bestLo, bestHi int
		for i := 0; i+1 < len(cuts); i++ {
			lo, hi := cuts[i], cuts[i+1]
			tau, q := bestSplit(xs[lo:hi], opt.MinSize)
			if tau > 0 && q > best.Q {
				best, bestLo, bestHi = Change{Index: lo + tau, Q: q}, lo, hi
			}
		}
		if best.Index < 0 {
			break
		}
		seg := xs[bestLo:bestHi]
		best.P = pValue(seg, best.Q, opt, rng)
		if best.P > opt.Alpha {
			break
		}
		best.Before = mean(xs[bestLo:best.Index])
		best.After = mean(xs[best.Index:bestHi])
		out = append(out, best)
		cuts = append(cuts, best.Index)
		slices.Sort(cuts)
	}
	slices.SortFunc(out, func(a, b Change) int { return a.Index - b.Index })
	return out
}

// bestSplit returns the split of seg with the largest q and that q; tau
// is 0 when seg is too short to split.
func bestSplit(seg []float64, minSize int) (tau int, q float64) {
	n := len(seg)
	if n < 2*minSize {
		return 0, 0
	}
	// p[i][j] is the sum of |seg[a]-seg[b]| over a < i, b < j: any
	// block's sum of distances in O(1).
	p := make([][]float64, n+1)
	for i := range p {
		p[i] = make([]float64, n+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			p[i][j] = p[i-1][j] + p[i][j-1] - p[i-1][j-1] + math.Abs(seg[i-1]-seg[j-1])
		}
	}
	block := func(a, b, c, d int) float64 { return p[b][d] - p[a][d] - p[b][c] + p[a][c] }
	for t := minSize; t <= n-minSize; t++ {
		m, k := float64(t), float64(n-t)
		between := block(0, t, t, n)
		within1 := block(0, t, 0, t) / 2 // each pair counted twice
		within2 := block(t, n, t, n) / 2
		e := 2*between/(m*k) - within1/(m*(m-1)/2) - within2/(k*(k-1)/2)
		if v := m * k / (m + k) * e; v > q {
			tau, q = t, v
		}
	}
	return tau, q
}

// pValue is the share of shuffles of seg (the observed order counted as
// one) whose best split reaches q.
func pValue(seg []float64, q float64, opt Options, rng *rand.Rand) float64 {
	perm := slices.Clone(seg)
	hits := 1
	for range opt.Permutations {
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if _, pq := bestSplit(perm, opt.MinSize); pq >= q {
			hits++
		}
	}
	return float64(hits) / float64(opt.Permutations+1)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
