// Package search runs a plan's load searches: the highest concurrency or
// request rate at which a condition holds (a latency percentile under a
// bound, a goodput share over a floor), by bisection or by stepping up,
// with each probe judged on the confidence interval of its figure (or, as
// perf_analyzer does, on its merged windows). It drives the engine through
// its Schedule hook, one probe at a time, and turns what it found into a
// result point of its own, the search's figure.
package search

import (
	"fmt"
	"math"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// maxLinearProbes bounds an unbounded linear search (range end 0): past
// this many steps the server is not the limit.
const maxLinearProbes = 10000

// Controller runs every search of a plan, one after the other.
type Controller struct {
	pl            *plan.Plan
	states        []*state
	allowUnstable bool
	// step is how many trials an undecided probe gets per extension.
	step int
	// Probed, when set, hears of each probe once it is judged (perfscen pa
	// prints perf_analyzer's line for one over the latency limit).
	Probed func(s *plan.Search, pr result.Probe)
}

type state struct {
	s     *plan.Search
	phase int // binary: 0 start, 1 end, 2 bisecting; linear: 0
	level float64
	// lo and hi bracket the answer while bisecting: lo meets, hi fails.
	lo, hi  float64
	pending string // the probe being judged
	extra   int    // trials added to the pending probe
	probes  []result.Probe
	done    bool
	found   bool
	value   float64
	failing float64
	allMet  bool
	capped  bool // an unbounded search reached plan.MaxConcurrency
}

// New returns a controller for p's searches (nil when it has none).
func New(p *plan.Plan) *Controller {
	if len(p.Searches) == 0 {
		return nil
	}
	c := &Controller{pl: p, allowUnstable: p.Measurement.AllowUnstable, step: max(p.Measurement.Trials, 3)}
	for i := range p.Searches {
		c.states = append(c.states, &state{s: &p.Searches[i]})
	}
	return c
}

// Next is the engine's Schedule hook.
func (c *Controller) Next(run *result.Run) engine.Next {
	for _, st := range c.states {
		if st.done {
			continue
		}
		if st.pending != "" {
			p := find(run, st.pending)
			if p == nil {
				// The probe was never recorded (interrupted): stop here.
				st.done = true
				return engine.Next{}
			}
			v := judge(st.s, p, c.allowUnstable, c.budget(st.s.Model))
			if v.undecided && st.extra < st.s.MaxExtraTrials {
				n := min(c.step, st.s.MaxExtraTrials-st.extra)
				st.extra += n
				return engine.Next{More: st.pending, Trials: n}
			}
			v.probe.Level = st.level
			// The reference for "busier than before" is the earlier
			// probes at this load or above: their own work (perfscen's
			// threads, a server on the machine) was at least as large,
			// so contention above theirs is not this load's doing.
			var earlier []*result.Point
			for _, pr := range st.probes {
				if e := find(run, pr.Point); e != nil && pr.Level >= st.level {
					earlier = append(earlier, e)
				}
			}
			unjudgedBy(&v.probe, c.pl.AbortOn, p, earlier, run.Environment.NumCPU)
			st.probes = append(st.probes, v.probe)
			if c.Probed != nil {
				c.Probed(st.s, v.probe)
			}
			st.pending, st.extra = "", 0
			st.advance(v.probe.Outcome == result.ProbeMeets)
			if st.done {
				continue
			}
		} else {
			st.level = st.s.Start
		}
		pt := st.s.Probe(st.level)
		st.pending = pt.ID
		return engine.Next{Point: &pt}
	}
	return engine.Next{}
}

// budget is the error budget of model's points: its own max_error_rate,
// else the measurement's.
func (c *Controller) budget(model string) float64 {
	if m, ok := c.pl.Model(model); ok && m.MaxErrorRate != nil {
		return *m.MaxErrorRate
	}
	return c.pl.Measurement.MaxErrorRate
}

// advance takes the last probe's outcome and picks the next level, or
// ends the search.
func (st *state) advance(meets bool) {
	s := st.s
	if s.Method == plan.SearchLinear {
		if !meets {
			st.failing, st.done = st.level, true
			return
		}
		st.found, st.value = true, st.level
		next := round(st.level + s.Step)
		if s.End == 0 && s.Metric == plan.MetricMaxConcurrency && next > plan.MaxConcurrency {
			// No point may keep more requests outstanding.
			st.capped, st.done = true, true
			return
		}
		if (s.End != 0 && next > s.End+1e-9) || len(st.probes) >= maxLinearProbes {
			st.allMet, st.done = s.End != 0, true
			return
		}
		st.level = next
		return
	}
	switch st.phase {
	case 0: // the start
		if !meets {
			st.failing, st.done = st.level, true
			return
		}
		st.found, st.value = true, st.level
		if s.End <= s.Start {
			st.allMet, st.done = true, true
			return
		}
		st.phase, st.level = 1, s.End
	case 1: // the end
		if meets {
			st.value, st.allMet, st.done = st.level, true, true
			return
		}
		st.phase, st.lo, st.hi = 2, s.Start, s.End
		st.failing = s.End
		st.bisect()
	default:
		if meets {
			st.lo, st.value = st.level, st.level
		} else {
			st.hi, st.failing = st.level, st.level
		}
		st.bisect()
	}
}

// bisect picks the midpoint while the bracket is wider than the step
// (perf_analyzer's rule: the step is the search's precision).
func (st *state) bisect() {
	if st.hi-st.lo <= st.s.Step+1e-9 {
		st.done = true
		return
	}
	mid := (st.lo + st.hi) / 2
	if st.s.Metric == plan.MetricMaxConcurrency {
		mid = math.Floor(mid)
	}
	st.level = round(mid)
}

func round(v float64) float64 { return math.Round(v*1e9) / 1e9 }

func find(run *result.Run, id string) *result.Point {
	for i := range run.Points {
		if run.Points[i].ID == id {
			return &run.Points[i]
		}
	}
	return nil
}

// Attach returns run with each search's result point appended (replacing
// any it already holds): what was found so far, or in the end.
func (c *Controller) Attach(run *result.Run) *result.Run {
	if c == nil || run == nil {
		return run
	}
	out := *run
	out.Points = nil
	ids := map[string]bool{}
	for _, st := range c.states {
		ids[st.s.PointID()] = true
	}
	for _, p := range run.Points {
		if !ids[p.ID] {
			out.Points = append(out.Points, p)
		}
	}
	for _, st := range c.states {
		if st.done || len(st.probes) > 0 {
			out.Points = append(out.Points, c.point(st))
		}
	}
	return &out
}

// point is the search's result point: the value found, as its figure.
func (c *Controller) point(st *state) result.Point {
	s := st.s
	t := s.Template
	m, _ := c.pl.Model(s.Model)
	p := result.Point{
		ID: s.PointID(), Model: s.Model, ModelName: m.Name, ModelVersion: m.Version, Server: t.Server,
		Protocol: t.Protocol, SharedMemory: orNone(t.SharedMemory), BatchSize: max(t.BatchSize, 1), Mode: t.Load.Mode,
		Shapes: t.Shapes, Coords: map[string]string{"search": s.Name}, Status: result.PointSearched,
	}
	v := st.value
	if !st.found {
		v = 0
	}
	if s.Metric == plan.MetricMaxConcurrency {
		p.Summary.MaxConcurrency = &v
	} else {
		p.Summary.MaxRequestRate = &v
	}
	out := &result.SearchOutcome{
		Condition: s.Condition.Text, Method: s.Method, Decide: s.Decide,
		Start: s.Start, End: s.End, Step: s.Step,
		Found: st.found, Value: v, AllMet: st.allMet, Failing: st.failing, Probes: st.probes,
	}
	if out.Probes == nil {
		out.Probes = []result.Probe{}
	}
	out.Message = message(s, st)
	p.Searched = out
	return p
}

// message says what the search found, naming the range and the bound.
func message(s *plan.Search, st *state) string {
	rng := rangeText(s)
	unit := "concurrency"
	if s.Metric == plan.MetricMaxRequestRate {
		unit = "request rate"
	}
	switch {
	case !st.done:
		return fmt.Sprintf("searching %s in %s for %s", unit, rng, s.Condition.Text)
	case !st.found:
		why := ""
		if n := len(st.probes); n > 0 {
			why = fmt.Sprintf(" (at %s: %s)", level(s, st.probes[n-1].Level), describe(s, st.probes[n-1]))
		}
		return fmt.Sprintf("no load in %s meets %s%s", rng, s.Condition.Text, why)
	case st.allMet:
		return fmt.Sprintf("every load in %s meets %s (%s %s: %s); the highest may lie beyond the range", rng, s.Condition.Text,
			unit, level(s, st.value), describe(s, lastAt(st, st.value)))
	}
	msg := fmt.Sprintf("%s %s meets %s (%s)", unit, level(s, st.value), s.Condition.Text, describe(s, lastAt(st, st.value)))
	if st.capped {
		msg += fmt.Sprintf("; no concurrency above %d is probed (the most a point may keep outstanding), so the highest may lie beyond", plan.MaxConcurrency)
	}
	if st.failing > 0 {
		pr := lastAt(st, st.failing)
		msg += fmt.Sprintf("; %s does not (%s: %s)", level(s, st.failing), pr.Outcome, describe(s, pr))
	}
	return msg
}

func lastAt(st *state, lvl float64) result.Probe {
	for i := len(st.probes) - 1; i >= 0; i-- {
		if st.probes[i].Level == lvl {
			return st.probes[i]
		}
	}
	return result.Probe{}
}

func rangeText(s *plan.Search) string {
	if s.End == 0 {
		return fmt.Sprintf("[%s, ∞)", plan.FormatLevel(s.Start))
	}
	return fmt.Sprintf("[%s, %s]", plan.FormatLevel(s.Start), plan.FormatLevel(s.End))
}

func level(s *plan.Search, v float64) string {
	if s.Metric == plan.MetricMaxRequestRate {
		return plan.FormatLevel(v) + "/s"
	}
	return plan.FormatLevel(v)
}

func orNone(s plan.SharedMemory) plan.SharedMemory {
	if s == "" {
		return plan.ShmNone
	}
	return s
}
