package verdict

import (
	"fmt"
	"strings"

	busyrule "github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Automatic returns the checks every run gets without asking: the run
// finished, each point was measured and stable, its failed requests stayed
// within the error budget, and validated outputs matched. Unstable, failed
// and partial points fail as environment failures (exit 3); with
// AllowUnstable an unstable point only warns.
func (o Options) Automatic(run *result.Run) []Check {
	var out []Check
	if c, ok := runCompleted(run); ok {
		out = append(out, c)
	}
	for i := range run.Points {
		p := &run.Points[i]
		if isSearched(p) {
			continue
		}
		if isProbe(p) {
			// A search judges its probes' stability and errors (an
			// overloaded probe is a load that fails); wrong outputs are
			// wrong at any load.
			if c, ok := validation(p); ok {
				out = append(out, c)
			}
			continue
		}
		if c, ok := aborted(p); ok {
			out = append(out, c)
			continue
		}
		if c, ok := stability(p, o.AllowUnstable, run.Environment.NumCPU); ok {
			out = append(out, c)
		}
		if c, ok := completed(p); ok {
			out = append(out, c)
		}
		if c, ok := validation(p); ok {
			out = append(out, c)
		}
		if c, ok := errorBudget(p, o.errorBudget(p.Model)); ok {
			out = append(out, c)
		}
	}
	return out
}

// runCompleted fails a run that stopped early; an interrupted run says so
// without blaming the server.
func runCompleted(run *result.Run) (Check, bool) {
	if (run.Status == "" || run.Status == result.StatusComplete) && len(run.Errors) == 0 {
		return Check{}, false
	}
	c := Check{Kind: KindErrors, Key: KeyRunCompleted, Name: "run completed", Status: StatusFail, Environment: true, NoValue: true,
		Message: fmt.Sprintf("run is %s", run.Status)}
	switch run.Status {
	case result.StatusComplete, "":
		c.Message = "run reported errors"
	case result.StatusInterrupted:
		c.Message = fmt.Sprintf("interrupted (SIGINT or SIGTERM) after %d point(s) measured; the run says nothing about the server", measuredPoints(run))
	}
	if len(run.Errors) > 0 {
		c.Message += ": " + strings.Join(run.Errors, "; ")
	}
	return c, true
}

func measuredPoints(run *result.Run) int {
	n := 0
	for _, p := range run.Points {
		if measured(&p) {
			n++
		}
	}
	return n
}

// measured reports whether a point has figures a check may judge: points
// that failed or were interrupted have none worth gating on; their own
// automatic check says why.
func measured(p *result.Point) bool {
	return p.Status != result.PointFailed && p.Status != result.PointPartial && p.Status != result.PointAborted
}

// notMeasured is the check a rule gets at a point it cannot judge.
func notMeasured(c Check, p *result.Point) Check {
	c.Status, c.NoValue = StatusSkip, true
	c.Message = fmt.Sprintf("not measured: point %s is %s", p.ID, p.Status)
	return c
}

// errorBudget fails a point whose kept trials have more failed requests
// than the budget allows (default none). A point where nothing succeeded
// is an environment failure quoting the dominant class of its failures
// (the first errors, for results without classes): there is no
// performance to judge, only a server that refused the requests.
func errorBudget(p *result.Point, budget float64) (Check, bool) {
	if !measured(p) || p.Uncounted() && p.Summary.Errors == 0 {
		return Check{}, false
	}
	// The kept trials' totals: the point's figures for errors and
	// error_rate, as every report prints them.
	figs := p.FigureMetrics()
	s := &figs
	if p.Errors.Count == 0 && s.Errors == 0 {
		return Check{}, false
	}
	c := Check{Kind: KindErrors, Key: KeyErrorBudget, Name: fmt.Sprintf("error rate <= %s", pctText(budget)), Model: p.Model, Point: p.ID,
		Metric: plan.MetricErrorRate, Value: s.ErrorRate, Bound: budget, Op: "<=", Unit: "fraction"}
	first := ""
	if d, ok := p.Errors.Dominant(); ok {
		// Counted by class, the dominant kind of failure is the one to
		// quote: a server killed mid-run answers a few dozen 500s while
		// shutting down, then refuses hundreds of thousands of
		// connections.
		first = fmt.Sprintf(": dominant error %s (%d of %d)", d.Class, d.Count, p.Errors.Count)
		if d.Example != "" {
			first += ", e.g. " + d.Example
		}
	} else if len(p.Errors.First) > 0 {
		first = ": " + strings.Join(p.Errors.First, "; ")
	}
	sent := s.Requests + s.Errors
	switch {
	case s.Requests == 0 && s.Errors > 0:
		c.Status, c.Environment = StatusFail, true
		c.Message = fmt.Sprintf("no request succeeded (%d failed)%s", s.Errors, first)
	case s.ErrorRate > budget:
		c.Status = StatusFail
		c.Message = fmt.Sprintf("%d of %d request(s) failed (%s), over the error budget of %s%s",
			s.Errors, sent, pctText(s.ErrorRate), pctText(budget), first)
	default:
		c.Status = StatusWarn
		c.Message = fmt.Sprintf("%d request(s) failed", p.Errors.Count)
		if s.Errors > 0 {
			c.Message = fmt.Sprintf("%d of %d request(s) in the kept trials failed (%s), within the error budget of %s",
				s.Errors, sent, pctText(s.ErrorRate), pctText(budget))
		} else {
			c.Message += " outside the kept trials"
		}
		c.Message += first
	}
	return c, true
}

func pctText(f float64) string { return numfmt.Percent(f) }

// stability fails a point that did not settle (exit 3). When its windows
// show the machine was too busy for it (busyrule.TooBusy: numCPU is the
// machine's), the message says so in those words, naming the contention,
// and points to the same-job A/B comparison, which a busy runner cannot
// spoil; a point unstable on a quiet machine says only that it did not
// stabilize.
func stability(p *result.Point, allowUnstable bool, numCPU int) (Check, bool) {
	c := Check{Kind: KindStability, Key: KeyStable, Name: "measurement stable", Model: p.Model, Point: p.ID,
		Status: StatusFail, Environment: true, NoValue: true}
	switch p.Status {
	case result.PointUnstable:
		c.Message = fmt.Sprintf("did not stabilize (%d window(s) measured)", len(p.Windows))
		if allowUnstable {
			c.Status, c.Environment = StatusWarn, false
			c.Message += "; allowed by allow_unstable"
		} else if s, ok := busyrule.Unsettled(p, numCPU); ok {
			c.Message = busyrule.NotSettled(p.ID, s, numCPU)
		}
	case result.PointFailed:
		c.Name = "point measured"
		c.Message = "could not be measured"
		if len(p.Errors.First) > 0 {
			c.Message += ": " + p.Errors.First[0]
		}
	case result.PointPartial:
		c.Message = "measurement interrupted"
	default:
		return Check{}, false
	}
	return c, true
}

// completed fails a point at which no request finished, neither with a
// response nor with an error: a hung server must never leave a point whose
// empty figures pass every threshold.
func completed(p *result.Point) (Check, bool) {
	if !measured(p) || p.Uncounted() || p.Summary.Requests > 0 || p.Summary.Errors > 0 {
		return Check{}, false
	}
	return Check{Kind: KindErrors, Key: KeyCompleted, Name: "requests completed", Model: p.Model, Point: p.ID,
		Metric: plan.MetricErrors, Status: StatusFail, Environment: true, NoValue: true,
		Message: "no request completed at this point (the server never answered within the measurement)"}, true
}

func validation(p *result.Point) (Check, bool) {
	v := p.Validation
	if !v.Enabled {
		return Check{}, false
	}
	c := Check{Kind: KindValidation, Key: KeyValidation, Name: "outputs match validation data", Model: p.Model, Point: p.ID,
		Value: float64(v.Mismatches), Bound: 0, Op: "==", Unit: "count", N: int(v.Checked)}
	switch {
	case v.Mismatches > 0:
		c.Status = StatusFail
		c.Message = fmt.Sprintf("%d of %d checked response(s) differ", v.Mismatches, v.Checked)
		if len(v.First) > 0 {
			c.Message += ": " + strings.Join(v.First, "; ")
		}
	case v.Checked == 0:
		c.Status = StatusWarn
		c.Message = "validation enabled but no response was checked"
	default:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("%d response(s) checked", v.Checked)
		if v.Sampled {
			c.Message += " (sampled)"
		}
	}
	return c, true
}
