package verdict

import "fmt"

// Kind says which rule produced a check.
type Kind string

const (
	KindThreshold  Kind = "threshold"
	KindComparison Kind = "comparison"
	KindBaseline   Kind = "baseline"
	KindValidation Kind = "validation"
	KindStability  Kind = "stability"
	KindErrors     Kind = "errors"
)

// CheckKey is the stable identity of the rule behind a check: with the
// check's point it names the check whatever its display Name says, so code
// and later looks (Settle) find it even when two rules share a name.
type CheckKey string

// Keys of the rules every run has.
const (
	// KeyTestbed is the check saying which testbed's history the baseline
	// gate used, or that it had none.
	KeyTestbed CheckKey = "baseline.testbed"
	// KeyRunCompleted fails a run that stopped early.
	KeyRunCompleted CheckKey = "run.completed"
	// KeyStable is a point's stability check; it is also the check that
	// says a point could not be measured at all.
	KeyStable CheckKey = "point.stable"
	// KeyCompleted fails a point at which no request finished.
	KeyCompleted CheckKey = "point.completed"
	// KeyValidation compares a point's outputs with validation data.
	KeyValidation CheckKey = "point.validation"
	// KeyErrorBudget holds a point's failed requests to its budget.
	KeyErrorBudget CheckKey = "point.error_budget"
	// KeyBlind is undecided at a point where the baseline gate has
	// checks and none of them could see a change (blind.go).
	KeyBlind CheckKey = "baseline.blind"
)

// Keys of the scenario's own rules name them by their place in the plan's
// lists: the plan is the same at every look, and a position stays unique
// where a display name need not (a threshold's text, a comparison's name).

// thresholdKey is the key of plan.Checks.Thresholds[i].
func thresholdKey(i int) CheckKey { return CheckKey(fmt.Sprintf("threshold.%d", i)) }

// comparisonKey is the key of plan.Checks.Comparisons[i] held to bound b;
// a comparison with both ratios gives two checks at each point.
func comparisonKey(i int, b bound) CheckKey {
	switch b.op {
	case ">=":
		return CheckKey(fmt.Sprintf("comparison.%d.min_ratio", i))
	case "<=":
		return CheckKey(fmt.Sprintf("comparison.%d.max_ratio", i))
	}
	return CheckKey(fmt.Sprintf("comparison.%d", i))
}

// baselineKey is the key of the baseline gate's check of metric.
func baselineKey(metric string) CheckKey { return CheckKey("baseline.metric." + metric) }

// Status is a check's outcome.
type Status string

const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusWarn Status = "warn"
	StatusSkip Status = "skip"
	// StatusInconclusive: the interval still straddles the bound after
	// every extra trial the budget allowed, or the testbed was disturbed;
	// neither a pass nor a demonstrated regression.
	StatusInconclusive Status = "inconclusive"
	// StatusNotGated: the check could not have detected the change it
	// exists to catch (testbed noise hides changes of that size, or no
	// history gates it). It never counts as passed: the summary counts it,
	// JUnit skips it with the reason, and gate.require_gated (or
	// --require-gated) makes it exit 4.
	StatusNotGated Status = "not_gated"
)

// Class is the baseline classification of one point × metric.
type Class string

const (
	ClassUnchanged Class = "unchanged"
	ClassImproved  Class = "improved"
	ClassRegressed Class = "regressed"
	ClassNew       Class = "new"
	ClassMissing   Class = "missing"
	ClassUnstable  Class = "unstable"
	// ClassUndecided: the data cannot yet tell (status inconclusive).
	ClassUndecided Class = "undecided"
)

// Check is one evaluated rule at one point. Fields that do not apply to a
// kind stay zero (e.g. P for thresholds).
type Check struct {
	Kind Kind `json:"kind"`
	// Key identifies the rule behind the check, whatever its display Name
	// says; every check has one. It stays out of the JSON, where Kind and
	// Name are the record.
	Key   CheckKey `json:"-"`
	Name  string   `json:"name"` // human title, e.g. "p95 < 30ms"
	Model string   `json:"model,omitempty"`
	Point string   `json:"point,omitempty"` // point ID
	// RefPoint is the reference arm's point of a comparison.
	RefPoint string `json:"ref_point,omitempty"`
	Metric   string `json:"metric,omitempty"`
	// Value is what was observed: the metric value (thresholds), the
	// median ratio (comparisons) or the run median (baselines).
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	// Bound and Op state the requirement Value was held to: the effective
	// bound, beyond which the check fails (tolerances and multiple-testing
	// corrections included), so a value within it always passes.
	Bound float64 `json:"bound"`
	Op    string  `json:"op,omitempty"`
	// Unchanged is a comparison's unchanged_ratio, where it has one: the
	// ratio a fail must be shown to differ from (with Value beyond Bound).
	Unchanged float64 `json:"unchanged,omitempty"`
	// NoValue marks a check that observed nothing to compare (a point
	// that was not measured, did not stabilize, has no data or no
	// history): Value, Bound and Effect are then meaningless zeros.
	NoValue bool `json:"no_value,omitempty"`
	// Center is, for baseline checks, the history's typical value (the
	// geometric mean of its run medians) the effect is measured from.
	Center float64 `json:"center,omitempty"`
	// Uncalibrated marks a baseline check whose data supports no bound:
	// it cannot fail, and says so instead of printing one.
	Uncalibrated bool `json:"uncalibrated,omitempty"`
	// Effect is the relative change against the reference or baseline,
	// e.g. -0.12 for a 12% drop; Lo and Hi bound it (comparisons: the
	// interval on the ratio) at Confidence.
	Effect     float64 `json:"effect"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence,omitempty"`
	// P is the p-value of the test behind the decision: a comparison's
	// rank test that the ratio lies beyond its bound when it passed, the
	// opposite test when it failed, and while undecided the test on the
	// side its interval (else its ratio) lies; a baseline check's
	// prediction-interval p. 0 where no test ran.
	P    float64 `json:"p"`
	N    int     `json:"n,omitempty"`
	NRef int     `json:"n_ref,omitempty"`
	// MDE is the smallest relative change the check could detect.
	MDE float64 `json:"mde,omitempty"`
	// Target is, for a baseline check, the smallest change it exists to
	// catch (the scenario's tolerance for its metric, else the default
	// tolerance); a check whose MDE exceeds it is not gated.
	Target float64 `json:"target,omitempty"`
	// NeedN is, for an inconclusive check, about how many trials per arm
	// (comparisons) or in this run (baselines) would decide it; 0 when no
	// number of trials would.
	NeedN int `json:"need_n,omitempty"`
	// Disturbed marks a check made inconclusive because the machine was
	// markedly busier with other work than in every baseline run.
	Disturbed bool `json:"disturbed,omitempty"`
	// Method names the statistics used: "mann-whitney+bootstrap" (a
	// comparison's arms as independent samples), "signed-rank+bootstrap"
	// (its arms paired by interleaved round), "prediction-interval",
	// "tolerance" or "" for plain comparisons; P is meaningful only for
	// the first three.
	Method   string   `json:"method,omitempty"`
	Class    Class    `json:"class,omitempty"`
	Status   Status   `json:"status"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Environment marks a failure caused by the measurement environment
	// (unstable or failed points) rather than by a regression.
	Environment bool `json:"environment,omitempty"`

	// The prediction interval's parameters, kept so a later correction
	// (Holm) can restate the bound at the level it applied: the history's
	// log-scale mean and the spread used, the direction a regression
	// moves (+1 up, -1 down) and the scenario's tolerance.
	logMean, logSD, dir, tol float64
	// What its message names: the limit the history alone sets, this
	// run's trial CV, the look, and whether the bound is the tolerance's.
	histLimit, trialCV float64
	look               string
	boundByTolerance   bool
}

// Verdict is every check of a run plus notices that are not checks (e.g.
// "no baseline recorded yet").
type Verdict struct {
	Checks  []Check  `json:"checks"`
	Notices []string `json:"notices,omitempty"`
	// Interrupted is set when the run was cancelled before it finished.
	Interrupted bool `json:"interrupted,omitempty"`
	// RequireGated makes a not-gated check undecided: the run is then
	// inconclusive (exit 4) instead of passing (gate.require_gated).
	RequireGated bool `json:"require_gated,omitempty"`
	// minRuns is the baseline gate's min_runs, for blind checks made
	// again when looks are settled (0: no baseline gate).
	minRuns int
}

// Failed returns the failing checks in order.
func (v *Verdict) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Status == StatusFail {
			out = append(out, c)
		}
	}
	return out
}

// EnvironmentFailure reports whether every failing check is an environment
// failure (unstable or failed points), so the CLI can exit 3 instead of 1.
// A run with at least one genuine regression is a check failure.
func (v *Verdict) EnvironmentFailure() bool {
	failed := v.Failed()
	if len(failed) == 0 {
		return false
	}
	for _, c := range failed {
		if !c.Environment {
			return false
		}
	}
	return true
}

// NotGated returns the checks that could not detect the change they exist
// for, in order.
func (v *Verdict) NotGated() []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Status == StatusNotGated {
			out = append(out, c)
		}
	}
	return out
}

// Inconclusive returns the checks whose data could not decide, in order.
func (v *Verdict) Inconclusive() []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Status == StatusInconclusive {
			out = append(out, c)
		}
	}
	return out
}
