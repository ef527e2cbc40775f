package verdict

import (
	"math"

	"github.com/perfscen/perfscen/runner/result"
)

// Outcome is what a scenario's run amounts to, decided once from its
// checks; cmd maps it to the process exit code.
type Outcome string

const (
	// OutcomePass: every check passed (warnings, skips and, unless
	// RequireGated, checks that were not gated allowed).
	OutcomePass Outcome = result.OutcomePass
	// OutcomeFail: a check failed on measured data (a regression, a
	// threshold, wrong outputs, an error budget overrun).
	OutcomeFail Outcome = result.OutcomeFail
	// OutcomeNotMeasured: the server or environment kept the run from
	// measuring (unreachable, a point where no request succeeded, an
	// unstable point, a run that stopped early).
	OutcomeNotMeasured Outcome = result.OutcomeNotMeasured
	// OutcomeInterrupted: the run was cancelled (SIGINT, SIGTERM) before it
	// finished; nothing it says is a verdict on the server.
	OutcomeInterrupted Outcome = result.OutcomeInterrupted
	// OutcomeInconclusive: the data cannot yet tell a change from noise.
	OutcomeInconclusive Outcome = result.OutcomeInconclusive
)

// Outcome decides the run: interrupted first (a cancelled run is never a
// verdict on the server), then a failure demonstrated by data, then an
// environment failure, then an undecided check, else pass. A demonstrated
// failure outranks an environment failure at another point: what was
// measured and found wrong must not be hidden by what could not be
// measured.
func (v *Verdict) Outcome() Outcome {
	if v.Interrupted {
		return OutcomeInterrupted
	}
	env := false
	for _, c := range v.Failed() {
		if !c.Environment {
			return OutcomeFail
		}
		env = true
	}
	if env {
		return OutcomeNotMeasured
	}
	if len(v.Inconclusive()) > 0 {
		return OutcomeInconclusive
	}
	if v.RequireGated && len(v.NotGated()) > 0 {
		return OutcomeInconclusive
	}
	return OutcomePass
}

// Record is the verdict as the result file keeps it, with the exit code
// and summary line the command chose for it.
func (v *Verdict) Record(exitCode int, summary string) *result.Verdict {
	r := &result.Verdict{Outcome: string(v.Outcome()), ExitCode: exitCode, Summary: summary,
		Checks: make([]result.CheckOutcome, len(v.Checks)), Notices: v.Notices}
	for i, c := range v.Checks {
		r.Checks[i] = result.CheckOutcome{Kind: string(c.Kind), Name: c.Name, Model: c.Model, Point: c.Point,
			Metric: c.Metric, Value: finite(c.Value), Unit: c.Unit, Op: c.Op, Bound: finite(c.Bound), NoValue: c.NoValue,
			Status: string(c.Status), Message: c.Message, Environment: c.Environment}
	}
	return r
}

// finite keeps JSON encodable: NaN and ±Inf become 0.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
