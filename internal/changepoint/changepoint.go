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
// candidate; the candidate of largest q over all segments is kept when it
// is significant against series without a change.
//
// Those series are not shuffles of the segment. A permutation test
// assumes the runs are exchangeable, and CI histories drift: with AR(1)
// noise of φ = 0.5 a shuffle test at α = 0.01 finds a change in about one
// flat 30-run series in five, since a wandering series looks like a step
// to a test that believes its runs independent. The null here is an AR(1)
// sieve bootstrap (Bühlmann 1997): the segment's residuals about its
// levels (cut at the candidate and at the best other place, see
// residuals) give φ and the innovations, and each simulated series is that
// AR(1) process driven by innovations drawn from them with replacement,
// its best split's q counted against the observed one. Thirty runs
// estimate φ poorly, and too low a φ is what makes false alarms, so the
// process uses φ raised by phiMargin standard errors, after the usual
// small-sample bias correction. docs/report.md gives the false-alarm rate
// and power measured by TestFalseAlarmRate. The draws come from a seeded
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
	// Permutations is the number of series drawn under the null per test
	// (default 199).
	Permutations int
	// Seed seeds the draws (default 1).
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
	// Q is the energy statistic of the split; P its p-value against the
	// null of no change in AR(1) noise.
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
		best.P = pValue(seg, best.Index-bestLo, best.Q, opt, rng)
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
	// p[i·(n+1)+j] is the sum of |seg[a]-seg[b]| over a < i, b < j: any
	// block's sum of distances in O(1).
	w := n + 1
	p := make([]float64, w*w)
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			p[i*w+j] = p[(i-1)*w+j] + p[i*w+j-1] - p[(i-1)*w+j-1] + math.Abs(seg[i-1]-seg[j-1])
		}
	}
	block := func(a, b, c, d int) float64 { return p[b*w+d] - p[a*w+d] - p[b*w+c] + p[a*w+c] }
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

// pValue is the share of series drawn under the null (the observed one
// counted as one) whose best split reaches q; tau is the candidate split
// of seg.
func pValue(seg []float64, tau int, q float64, opt Options, rng *rand.Rand) float64 {
	res := residuals(seg, tau)
	phi := nullPhi(res)
	u := innovations(res, phi)
	sim := make([]float64, len(seg))
	hits := 1
	for range opt.Permutations {
		x := 0.0
		for i := -burnIn; i < len(sim); i++ {
			x = phi*x + u[rng.IntN(len(u))]
			if i >= 0 {
				sim[i] = x
			}
		}
		if _, sq := bestSplit(sim, opt.MinSize); sq >= q {
			hits++
		}
	}
	return float64(hits) / float64(opt.Permutations+1)
}

// burnIn is how many steps a simulated series runs before its first
// value, so that it starts from the process's own spread rather than from
// 0 (0.95^100 < 1%).
const burnIn = 100

// maxPhi keeps the simulated process stationary.
const maxPhi = 0.95

// phiMargin is how many standard errors φ is raised by. Measured, not
// derived: with φ from residuals about three fitted levels, 2.25 keeps
// the false-alarm rate on flat AR(1) φ = 0.5 series under 5% with the
// most power left (TestFalseAlarmRate; docs/report.md has the figures).
const phiMargin = 2.25

// residuals are seg's values less the mean of their piece when seg is cut
// at tau and at the one other place (pieces of 2 or more) that leaves the
// least squared error: the noise once the candidate change, and another
// change the segment may hold, are taken out, so that neither passes for
// autocorrelation. With the candidate's two means alone, a series that
// rose and fell back had φ near 1 and no change was ever found in it.
func residuals(seg []float64, tau int) []float64 {
	n := len(seg)
	// sum and sq are prefix sums: any piece's squared error in O(1).
	sum, sq := make([]float64, n+1), make([]float64, n+1)
	for i, v := range seg {
		sum[i+1], sq[i+1] = sum[i]+v, sq[i]+v*v
	}
	sse := func(a, b int) float64 {
		s := sum[b] - sum[a]
		return sq[b] - sq[a] - s*s/float64(b-a)
	}
	cuts := []int{0, tau, n}
	best := math.Inf(1)
	for k := 2; k <= n-2; k++ {
		if k > tau-2 && k < tau+2 {
			continue
		}
		a, b := min(tau, k), max(tau, k)
		if e := sse(0, a) + sse(a, b) + sse(b, n); e < best {
			best, cuts = e, []int{0, a, b, n}
		}
	}
	out := make([]float64, n)
	for c := 0; c+1 < len(cuts); c++ {
		m := mean(seg[cuts[c]:cuts[c+1]])
		for i := cuts[c]; i < cuts[c+1]; i++ {
			out[i] = seg[i] - m
		}
	}
	return out
}

// nullPhi is the lag-1 autocorrelation the null process uses: the
// Yule–Walker estimate from res, corrected for its small-sample bias
// (Kendall: E[φ̂] ≈ φ − (1+3φ)/n), then raised by phiMargin standard
// errors (√((1−φ²)/n)), since too low a φ is what makes false alarms;
// within [0, maxPhi].
func nullPhi(res []float64) float64 {
	n := float64(len(res))
	var num, den float64
	for i, r := range res {
		den += r * r
		if i > 0 {
			num += r * res[i-1]
		}
	}
	if den == 0 {
		return 0
	}
	phi := (n*num/den + 1) / (n - 3)
	phi += phiMargin * math.Sqrt(math.Max(1-phi*phi, 0)/n)
	return math.Max(0, math.Min(phi, maxPhi))
}

// innovations are the AR(1) residuals r[i] − φ·r[i−1], centred: what
// drives the null process.
func innovations(res []float64, phi float64) []float64 {
	u := make([]float64, len(res)-1)
	for i := 1; i < len(res); i++ {
		u[i-1] = res[i] - phi*res[i-1]
	}
	m := mean(u)
	for i := range u {
		u[i] -= m
	}
	return u
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
