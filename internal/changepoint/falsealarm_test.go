package changepoint

// The false-alarm harness runs Detect over seeded synthetic histories of
// 30 runs, as long as the ones the history report reads, with noise that
// is independent or AR(1) with φ = 0.5 (a drifting CI runner), and counts
// the series in which it reports any change: on flat series that is the
// false-alarm rate, on series with a step the power. docs/report.md
// quotes the figures of the full run.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

const (
	simRuns  = 30
	simLevel = 100.0
	// simSD is the run-to-run spread: 10% of the level, so a 20% step is
	// two standard deviations.
	simSD = 10.0
)

// simSeries is replicates' worth of one history shape in one noise.
type simShape struct {
	name string
	// level is the series' mean at run i as a multiple of simLevel.
	level func(i int) float64
}

var simShapes = []simShape{
	{"flat", func(int) float64 { return 1 }},
	{"+20% from run 16", func(i int) float64 { return step(i, 15, 1.2) }},
	{"+20% from run 26", func(i int) float64 { return step(i, 25, 1.2) }},
	{"+30% from run 16", func(i int) float64 { return step(i, 15, 1.3) }},
	{"+30% for runs 11–20", func(i int) float64 {
		if i >= 10 && i < 20 {
			return 1.3
		}
		return 1
	}},
}

func step(i, at int, to float64) float64 {
	if i >= at {
		return to
	}
	return 1
}

// ar1 is n values of an AR(1) process with unit marginal variance, started
// from its stationary distribution (phi 0: independent normals).
func ar1(r *rand.Rand, n int, phi float64) []float64 {
	xs := make([]float64, n)
	innov := math.Sqrt(1 - phi*phi)
	x := r.NormFloat64()
	for i := range xs {
		if i > 0 {
			x = phi*x + innov*r.NormFloat64()
		}
		xs[i] = x
	}
	return xs
}

// replicates is 200 series per noise and shape in plain test runs;
// PERFSCEN_SOUNDNESS=full (make soundness-sim, run by CI) runs 2000, the
// figures docs/report.md quotes.
func replicates() int {
	if os.Getenv("PERFSCEN_SOUNDNESS") == "full" {
		return 2000
	}
	return 200
}

// detectionRate is the share of n seeded series of shape in AR(1) noise
// phi in which Detect finds any change.
func detectionRate(sh simShape, phi float64, n int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(1000*phi)))
	hits := 0
	for range n {
		xs := ar1(r, simRuns, phi)
		for i := range xs {
			xs[i] = simLevel*sh.level(i) + simSD*xs[i]
		}
		if len(Detect(xs, Options{})) > 0 {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// TestFalseAlarmRate holds the flat series' rates to the goals: at most
// α = 1% with independent noise and at most 5% with AR(1) φ = 0.5, with a
// margin of three standard errors of the simulated proportion in the
// quick run (the full run's figures must meet the goals as they are), and
// the power for a 20% step in the middle of the history to floors that a
// change of method must not fall under unnoticed.
func TestFalseAlarmRate(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector: the simulation runs without it (make test runs it so)")
	}
	n := replicates()
	noises := []struct {
		name string
		phi  float64
		// alarm is the highest false-alarm rate allowed; power the lowest
		// detection rate of "+20% from run 16".
		alarm, power float64
	}{
		{"independent", 0, 0.01, 0.65},
		{"AR(1) φ = 0.5", 0.5, 0.05, 0.35},
	}
	rates := make([][]float64, len(noises))
	for i, nz := range noises {
		rates[i] = make([]float64, len(simShapes))
		t.Run(nz.name, func(t *testing.T) {
			for j, sh := range simShapes {
				rates[i][j] = detectionRate(sh, nz.phi, n, uint64(j+1))
			}
			margin := 0.0
			if n < 2000 {
				margin = 3 * math.Sqrt(nz.alarm*(1-nz.alarm)/float64(n))
			}
			if got := rates[i][0]; got > nz.alarm+margin {
				t.Errorf("false alarms on flat series %.2f%%, want ≤ %.2f%% (+%.2f%% margin at %d series)", 100*got, 100*nz.alarm, 100*margin, n)
			}
			if got := rates[i][1]; got < nz.power {
				t.Errorf("a 20%% step from run 16 found in %.1f%% of series, want ≥ %.0f%%", 100*got, 100*nz.power)
			}
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d series of %d runs per cell, run-to-run SD %.0f%% of the level\n\n| series | %s | %s |\n|---|---:|---:|\n",
		n, simRuns, 100*simSD/simLevel, noises[0].name, noises[1].name)
	for j, sh := range simShapes {
		fmt.Fprintf(&b, "| %s | %.2f%% | %.2f%% |\n", sh.name, 100*rates[0][j], 100*rates[1][j])
	}
	t.Log("\n" + b.String())
}
