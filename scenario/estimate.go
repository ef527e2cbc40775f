package scenario

import (
	"fmt"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// StabilityWindows is how many consecutive windows the stability rule
// compares (perf_analyzer's hard-coded 3).
const StabilityWindows = 3

// NominalRate is the request rate per outstanding request assumed when the
// duration of a count window or an iterations point must be guessed.
const NominalRate = 100.0

// Estimation is a guess at how long a plan takes to run.
type Estimation struct {
	PerPoint []time.Duration // best case, in plan.Points order
	Total    time.Duration   // best case: every point stable after 3 windows
	// Worst: every point needs max_trials windows, and every extra trial
	// the gate allows is measured (Extra).
	Worst time.Duration
	// Extra is the most time the gate's extra trials may add (comparisons
	// and baseline checks that stay inconclusive): max_extra_trials per
	// point at warm-up + window each, capped by max_extra_time. It is
	// part of Worst.
	Extra time.Duration
	// Assumption states how the figures were derived, for printing.
	Assumption string
}

// Estimate computes a point's wall time as warm-up + (3 stabilization
// windows + trials) × window at best and warm-up + (max_trials + trials)
// × window at worst. Count windows and iterations are timed at
// NominalRate requests/s per outstanding request (or the request rate),
// and a count window lasts at least 1 s as perf_analyzer's does.
func Estimate(p *plan.Plan) Estimation {
	m := p.Measurement
	e := Estimation{PerPoint: make([]time.Duration, len(p.Points))}
	for i, pt := range p.Points {
		rate := pointRate(pt.Load)
		if pt.Load.Mode == plan.LoadIterations {
			n := float64(pt.Load.WarmupIterations + pt.Load.Iterations)
			d := m.Warmup + seconds(n/rate)
			e.PerPoint[i], e.Total, e.Worst = d, e.Total+d, e.Worst+d
			continue
		}
		w := m.Window
		if m.Mode == plan.CountWindows {
			w = max(time.Second, seconds(float64(m.RequestCount)/rate))
		}
		best := m.Warmup + time.Duration(StabilityWindows+m.Trials)*w
		worst := m.Warmup + time.Duration(max(m.MaxTrials, StabilityWindows)+m.Trials)*w
		e.PerPoint[i] = best
		e.Total += best
		e.Worst += worst
	}
	e.Assumption = fmt.Sprintf("per point: warm-up + (%d stabilization windows + %d trials) × window at best, (%d max trials + %d trials) × window at worst",
		StabilityWindows, m.Trials, m.MaxTrials, m.Trials)
	if g := p.Checks.Gate; g.MaxExtraTrials > 0 && (len(p.Checks.Comparisons) > 0 || p.Checks.Baseline != nil) {
		var extra time.Duration
		for _, pt := range p.Points {
			if pt.Load.Mode == plan.LoadIterations {
				continue
			}
			w := m.Window
			if m.Mode == plan.CountWindows {
				w = max(time.Second, seconds(float64(m.RequestCount)/pointRate(pt.Load)))
			}
			extra += time.Duration(g.MaxExtraTrials) * (m.Warmup + w)
		}
		if g.MaxExtraTime > 0 {
			extra = min(extra, g.MaxExtraTime)
		}
		e.Extra = extra
		e.Worst += extra
		e.Assumption += fmt.Sprintf("; the worst case adds up to %s of extra trials for undecided checks (gate.max_extra_trials %d per point, gate.max_extra_time %s)",
			extra.Round(time.Second), g.MaxExtraTrials, g.MaxExtraTime)
	}
	if m.Mode == plan.CountWindows || hasIterations(p) {
		e.Assumption += fmt.Sprintf("; count windows and iterations assume %.0f requests/s per outstanding request (or the request rate), at least 1s per count window", NominalRate)
	}
	return e
}

func pointRate(l plan.Load) float64 {
	if l.Mode == plan.LoadRequestRate && l.Rate > 0 {
		return l.Rate
	}
	return NominalRate * float64(max(1, l.Concurrency))
}

func hasIterations(p *plan.Plan) bool {
	for _, pt := range p.Points {
		if pt.Load.Mode == plan.LoadIterations {
			return true
		}
	}
	return false
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
