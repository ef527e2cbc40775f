package scenario

import (
	"fmt"
	"math"
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
	grouped := false
	for i, pt := range p.Points {
		if pt.Stage != nil {
			// A stage lasts its duration, in whole windows.
			d := time.Duration(max(int((pt.Stage.Duration+m.Window-1)/max(m.Window, 1)), 1)) * m.Window
			e.PerPoint[i], e.Total, e.Worst = d, e.Total+d, e.Worst+d
			continue
		}
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
		if pt.Group != 0 {
			// Interleaved points measure each trial in a session of its
			// own (A B A B …), and every session warms up first.
			best += time.Duration(m.Trials) * m.Warmup
			worst += time.Duration(m.Trials) * m.Warmup
			grouped = true
		}
		e.PerPoint[i] = best
		if pt.Together != 0 && i > 0 && p.Points[i-1].Together == pt.Together {
			continue // the members of a mix step share its seconds
		}
		e.Total += best
		e.Worst += worst
	}
	e.Assumption = fmt.Sprintf("per point: warm-up + (%d stabilization windows + %d trials) × window at best, (%d max trials + %d trials) × window at worst",
		StabilityWindows, m.Trials, m.MaxTrials, m.Trials)
	if grouped && m.Warmup > 0 {
		e.Assumption += "; interleaved points warm up again before each trial"
	}
	if len(p.Searches) > 0 {
		w := m.Window
		if m.Mode == plan.CountWindows {
			w = time.Second
		}
		best := m.Warmup + time.Duration(StabilityWindows+m.Trials)*w
		worst := m.Warmup + time.Duration(max(m.MaxTrials, StabilityWindows)+m.Trials)*w
		for _, s := range p.Searches {
			_, hi := SearchProbes(&s)
			e.Total += time.Duration(hi) * best
			extra := time.Duration(s.MaxExtraTrials) * w
			e.Worst += time.Duration(hi) * (worst + extra)
		}
		e.Assumption += "; a search measures each probe as a point, as many probes as its range can take, the worst case with every extra trial it allows"
	}
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

// SearchProbes is how many probes a search measures at least and at
// most: a bisection the start, the end and about log2 of the range over
// the step; a linear search from one probe to every step of its range (an
// unbounded one is counted as 20 steps).
func SearchProbes(s *plan.Search) (least, most int) {
	if s.Method == plan.SearchLinear {
		n := 20
		if s.End > 0 {
			n = int((s.End-s.Start)/s.Step+1e-9) + 1
		}
		return 1, n
	}
	if s.End <= s.Start {
		return 1, 1
	}
	bisect := int(math.Ceil(math.Log2(math.Max((s.End-s.Start)/s.Step, 1))))
	return 1, 2 + bisect
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
