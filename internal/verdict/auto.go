package verdict

import (
	"fmt"
	"strings"

	"github.com/perfscen/perfscen/internal/result"
)

// Automatic returns the checks every run gets without asking: the run
// finished, each point was measured and stable, and validated outputs
// matched. Unstable, failed and partial points fail as environment
// failures (exit 3); with allowUnstable an unstable point only warns.
func Automatic(run *result.Run, allowUnstable bool) []Check {
	var out []Check
	if run.Status != "" && run.Status != result.StatusComplete || len(run.Errors) > 0 {
		c := Check{Kind: KindErrors, Name: "run completed", Status: StatusFail, Environment: true,
			Message: fmt.Sprintf("run is %s", run.Status)}
		if run.Status == result.StatusComplete || run.Status == "" {
			c.Message = "run reported errors"
		}
		if len(run.Errors) > 0 {
			c.Message += ": " + strings.Join(run.Errors, "; ")
		}
		out = append(out, c)
	}
	for i := range run.Points {
		p := &run.Points[i]
		if c, ok := stability(p, allowUnstable); ok {
			out = append(out, c)
		}
		if c, ok := completed(p); ok {
			out = append(out, c)
		}
		if c, ok := validation(p); ok {
			out = append(out, c)
		}
		if p.Errors.Count > 0 {
			c := Check{Kind: KindErrors, Name: "request errors", Model: p.Model, Point: p.ID,
				Metric: result.MetricErrors, Value: float64(p.Errors.Count), Unit: "count", Status: StatusWarn,
				Message: fmt.Sprintf("%d request(s) failed", p.Errors.Count)}
			if len(p.Errors.First) > 0 {
				c.Message += ": " + strings.Join(p.Errors.First, "; ")
			}
			out = append(out, c)
		}
	}
	return out
}

func stability(p *result.Point, allowUnstable bool) (Check, bool) {
	c := Check{Kind: KindStability, Name: "measurement stable", Model: p.Model, Point: p.ID,
		Status: StatusFail, Environment: true}
	switch p.Status {
	case result.PointUnstable:
		c.Message = fmt.Sprintf("did not stabilize (%d window(s) measured)", len(p.Windows))
		if allowUnstable {
			c.Status, c.Environment = StatusWarn, false
			c.Message += "; allowed by allow_unstable"
		}
	case result.PointFailed:
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
	if p.Status == result.PointImported || p.Summary.Requests > 0 || p.Summary.Errors > 0 {
		return Check{}, false
	}
	return Check{Kind: KindErrors, Name: "requests completed", Model: p.Model, Point: p.ID,
		Metric: result.MetricErrors, Status: StatusFail, Environment: true,
		Message: "no request completed at this point (the server never answered within the measurement)"}, true
}

func validation(p *result.Point) (Check, bool) {
	v := p.Validation
	if !v.Enabled {
		return Check{}, false
	}
	c := Check{Kind: KindValidation, Name: "outputs match validation data", Model: p.Model, Point: p.ID,
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
