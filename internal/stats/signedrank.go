package stats

import (
	"math"
	"sort"
)

// SignedRankP is the one-sided p-value of Wilcoxon's signed-rank test that
// the differences d are centred above 0 (greater) or below it (!greater),
// against the null that each is as likely negative as positive. Zeros are
// dropped (Wilcoxon's convention); tied magnitudes share their mid-rank.
// The p-value is exact: the null distribution of the positive-rank sum is
// counted over all 2^n sign patterns of these ranks (doubled, so mid-ranks
// stay integers), so ties and small n need no normal approximation. With
// no nonzero difference nothing is shown either way: p = 1.
//
// A comparison's interleaved rounds give paired trials: one window of each
// arm, back to back, so the machine's slow swings (a neighbour's build
// starting) move both alike and cancel in their ratio. The rank test on the
// pairs' log ratios sees a change the two arms' spread would hide from a
// test that treats them as independent samples.
func SignedRankP(d []float64, greater bool) float64 {
	var abs []float64
	var neg []bool
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			abs = append(abs, math.Abs(x))
			neg = append(neg, x < 0)
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return abs[idx[a]] < abs[idx[b]] })
	// rank2 is twice each difference's mid-rank (1-based).
	rank2 := make([]int, n)
	for i := 0; i < n; {
		j := i
		for j+1 < n && abs[idx[j+1]] == abs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			rank2[idx[k]] = i + j + 2
		}
		i = j + 1
	}
	// observed: twice the sum of ranks on the tested side.
	observed, total := 0, 0
	for i, r := range rank2 {
		total += r
		if neg[i] != greater {
			observed += r
		}
	}
	if n > exactSignedRankMax {
		return signedRankNormal(rank2, observed)
	}
	// counts[s] = number of sign patterns whose tested-side doubled rank
	// sum is s; every pattern has probability 2^-n.
	counts := make([]float64, total+1)
	counts[0] = 1
	top := 0
	for _, r := range rank2 {
		for s := top; s >= 0; s-- {
			if counts[s] != 0 {
				counts[s+r] += counts[s]
			}
		}
		top += r
	}
	var tail float64
	for s := observed; s <= total; s++ {
		tail += counts[s]
	}
	return math.Min(1, tail/math.Exp2(float64(n)))
}

// exactSignedRankMax is the most nonzero differences the exact count
// takes: its cost grows as n³ (n = 400: 0.1 s), and 2^n leaves float64
// past 1023. Above it the normal approximation is as good as exact.
const exactSignedRankMax = 400

// signedRankNormal is the upper tail of the doubled rank sum observed
// under the null, by the normal approximation with the ties' variance
// (each sign ±½·rank2 about its mean) and a continuity correction of one
// doubled-rank step.
func signedRankNormal(rank2 []int, observed int) float64 {
	var mean, variance float64
	for _, r := range rank2 {
		mean += float64(r) / 2
		variance += float64(r) * float64(r) / 4
	}
	z := (float64(observed) - 0.5 - mean) / math.Sqrt(variance)
	return math.Min(1, 0.5*math.Erfc(z/math.Sqrt2))
}
