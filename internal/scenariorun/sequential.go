package scenariorun

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// sequential decides a run's checks in up to maxLooks looks: after the
// first, the points of inconclusive checks get step more trials each
// (interleaved, by the runner) and the checks are decided again, until
// none is left, the extra-trial budget or the time budget is spent. The
// number of looks is fixed before the run, so each look's share of α is
// too (verdict.Options.spend).
type sequential struct {
	opts       verdict.Options
	checks     plan.Checks
	base       *baseline.File
	gate       plan.Gate
	est        time.Duration // one extra window, warm-up included
	step       int
	look       int
	extra      int           // trials added per point so far
	spent      time.Duration // time taken by rounds of extra trials
	lastTook   time.Duration // the last round's
	roundBegan time.Time
	pending    bool // trials were added since the last evaluation
	v          *verdict.Verdict
	now        func() time.Time
	log        io.Writer
}

func newSequential(pl *plan.Plan, checks plan.Checks, base *baseline.File, opts verdict.Options, log io.Writer) *sequential {
	s := &sequential{opts: opts, checks: checks,
		base: base, gate: pl.Checks.Gate, step: max(pl.Measurement.Trials, 3), now: time.Now, log: log}
	s.est = pl.Measurement.Warmup + pl.Measurement.Window
	if pl.Measurement.Window <= 0 {
		s.est += time.Second
	}
	s.opts.MaxLooks = 1
	if s.gate.MaxExtraTrials > 0 {
		s.opts.MaxLooks += (s.gate.MaxExtraTrials + s.step - 1) / s.step
	}
	return s
}

func (s *sequential) evaluate(run *result.Run) *verdict.Verdict {
	s.look++
	o := s.opts
	o.Look = s.look
	s.v = verdict.Settle(s.v, o.Evaluate(s.checks, run, s.base))
	s.pending = false
	return s.v
}

// extend is the runner's Extend hook: decide, then name the points that
// need more trials, if the budgets allow another round.
func (s *sequential) extend(run *result.Run) ([]string, int) {
	now := s.now()
	if s.pending {
		s.lastTook = now.Sub(s.roundBegan)
		s.spent += s.lastTook
	}
	v := s.evaluate(run)
	ids := v.Undecided()
	if len(ids) == 0 || s.look >= s.opts.MaxLooks {
		return nil, 0
	}
	n := min(s.step, s.gate.MaxExtraTrials-s.extra)
	// The next round takes about as long as the last one did or, before
	// any, as its windows' nominal length.
	next := s.lastTook
	if next == 0 {
		next = time.Duration(n*len(ids)) * s.est
	}
	if s.spent+next > s.gate.MaxExtraTime {
		fmt.Fprintf(s.log, "perfscen: %d check(s) still inconclusive after look %d; %d more trial(s) at %d point(s) (about %s) would exceed gate.max_extra_time (%s)\n",
			len(v.Inconclusive()), s.look, n, len(ids), next.Round(time.Second), s.gate.MaxExtraTime)
		return nil, 0
	}
	s.roundBegan = now
	s.extra += n
	s.pending = true
	fmt.Fprintf(s.log, "perfscen: %d check(s) inconclusive after look %d of %d; measuring %d more trial(s), interleaved, at %s\n",
		len(v.Inconclusive()), s.look, s.opts.MaxLooks, n, strings.Join(ids, ", "))
	return ids, n
}

// final is the verdict after the run: the last look's, or a new look when
// trials were added since (or the run never reached the hook).
func (s *sequential) final(run *result.Run) *verdict.Verdict {
	if s.v == nil || s.pending {
		return s.evaluate(run)
	}
	return s.v
}
