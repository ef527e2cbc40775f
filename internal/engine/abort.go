package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// abortAt asks the run's abort conditions about a closed window; true
// stops the point (and, for a point of the sweep, the run).
func (pr *pointRunner) abortAt(m *measured) bool {
	hook := pr.rs.opts.Abort
	if hook == nil || (m.acc.n == 0 && m.acc.errs == 0) {
		return false
	}
	reason, stopRun := hook(pr.p, &m.win, &m.met)
	if reason == "" {
		return false
	}
	pr.aborted = reason
	pr.notes = append(pr.notes, fmt.Sprintf("aborted at window %d: %s", m.win.Index+1, reason))
	if stopRun && pr.p.Search == "" {
		pr.stopRun = true
		pr.rs.stopped = fmt.Sprintf("stopped early: %s at %s (window %d); the points after it were not measured", reason, pr.p.ID, m.win.Index+1)
	}
	return true
}

// ramp measures one stage of load.stages (a unit of one point): no stability search, every
// window kept. A held stage (From == To) is one session of windows; a
// ramp is a staircase, one session per window at the level the ramp
// reaches at that window's end.
func (u *unit) ramp(ctx context.Context) error {
	pr := u.prs[0]
	st := pr.p.Stage
	pr.status = result.PointStable
	n := 1
	if pr.m.Window > 0 {
		n = max(int(math.Ceil(float64(st.Duration)/float64(pr.m.Window))), 1)
	}
	conc := pr.p.Load.Mode != plan.LoadRequestRate
	keep := func(m *measured) bool {
		pr.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win, Metrics: &m.met, Start: m.start, End: m.end})
		pr.kept = append(pr.kept, len(pr.windows)-1)
		if pr.abortAt(m) {
			pr.status = result.PointAborted
			return false
		}
		return true
	}
	pr.setLevel(st.Level(n-1, n, conc), conc)
	if st.From == st.To {
		return u.segment(ctx, func(ms []*measured) bool { return keep(ms[0]) && len(pr.kept) < n })
	}
	for i := 0; i < n && pr.aborted == ""; i++ {
		pr.setLevel(st.Level(i, n, conc), conc)
		if err := u.segment(ctx, func(ms []*measured) bool { keep(ms[0]); return false }); err != nil {
			return err
		}
	}
	return nil
}

func (pr *pointRunner) setLevel(v float64, conc bool) {
	if conc {
		pr.p.Load.Concurrency = int(v)
	} else {
		pr.p.Load.Rate = v
	}
}
