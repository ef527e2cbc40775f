package verdict

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/numfmt"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Thresholds evaluates each absolute bound on the summary of every point
// it selects. A bound with nothing to check fails: a selector matching no
// point, or a metric without data at a selected point, is a broken gate,
// not a pass.
func Thresholds(ths []plan.Threshold, run *result.Run) []Check {
	var out []Check
	for ti, th := range ths {
		mi, _ := plan.LookupMetric(th.Metric)
		name := th.Text
		if name == "" {
			name = fmt.Sprintf("%s %s %s", th.Metric, th.Op, numfmt.Value(th.Value, mi.Unit))
		}
		matched := 0
		for i := range run.Points {
			p := &run.Points[i]
			if !appliesTo(th.Metric, p) || !selects(th.Selector, p) {
				continue
			}
			matched++
			c := Check{
				Kind: KindThreshold, Key: thresholdKey(ti), Name: name, Model: p.Model, Point: p.ID,
				Metric: th.Metric, Unit: mi.Unit, Bound: th.Value, Op: th.Op,
			}
			if !measured(p) {
				out = append(out, notMeasured(c, p))
				continue
			}
			fig, ok := p.Figure(th.Metric)
			v := fig.Value
			switch {
			case noneSucceeded(p):
				// Slow failures (a deadline each) may not stop the point
				// early, yet its figures are still those of nothing: the
				// error budget's check says "could not measure", and no
				// threshold may turn that into a failure on data.
				c.Status, c.NoValue, c.Environment = StatusFail, true, true
				c.Message = fmt.Sprintf("could not measure: no request succeeded at %s (%d failed), so no %s data", p.ID, p.FigureMetrics().Errors, th.Metric)
			case !ok && finishedNothing(p):
				// Nothing to judge is no verdict on the server: the
				// point's "requests completed" check says why.
				c.Status, c.NoValue, c.Environment = StatusFail, true, true
				c.Message = fmt.Sprintf("could not measure: no request finished at %s, so no %s data", p.ID, th.Metric)
			case !ok:
				c.Status, c.NoValue = StatusFail, true
				c.Message = fmt.Sprintf("no data for %s at %s", th.Metric, p.ID)
			default:
				c.Value, c.N = v, fig.Trials
				if th.Value != 0 {
					c.Effect = v/th.Value - 1
				}
				holds, err := plan.Compare(v, th.Op, th.Value)
				switch {
				case err != nil:
					c.Status, c.Message = StatusFail, err.Error()
				case holds:
					c.Status = StatusPass
				default:
					c.Status = StatusFail
					c.Message = fmt.Sprintf("%s is %s (%s), bound %s %s", th.Metric, numfmt.Value(v, mi.Unit), fig.Label(), th.Op, numfmt.Value(th.Value, mi.Unit))
					if unknownAnswer(&c, p) {
						break
					}
					if pr, ok := searchDoubt(p, th.Op, th.Value); ok {
						c.Status = StatusInconclusive
						c.Message = fmt.Sprintf("inconclusive: %s; %s", doubtText(p.Searched, pr), c.Message)
					}
				}
			}
			out = append(out, c)
		}
		if matched == 0 {
			c := Check{
				Kind: KindThreshold, Key: thresholdKey(ti), Name: name, Metric: th.Metric, Unit: mi.Unit,
				Bound: th.Value, Op: th.Op, Status: StatusFail, NoValue: true,
				Message: "selector matches no measured point",
			}
			if run.Status != "" && run.Status != result.StatusComplete {
				// The run stopped before the selected points: nothing to judge.
				c.Status, c.Message = StatusSkip, fmt.Sprintf("not measured: the run is %s", run.Status)
			}
			out = append(out, c)
		}
	}
	return out
}

// noneSucceeded reports whether p's kept trials hold failed requests and
// not one success (the error budget's "no request succeeded").
func noneSucceeded(p *result.Point) bool {
	f := p.FigureMetrics()
	return f.Requests == 0 && f.Errors > 0
}

// finishedNothing reports whether no request at p finished, answered or
// failed (imported points carry no counts and are taken at their word).
func finishedNothing(p *result.Point) bool {
	return !p.Uncounted() && p.Summary.Requests == 0 && p.Summary.Errors == 0
}
