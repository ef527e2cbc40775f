package plan

import (
	"fmt"
	"math"
	"time"
)

// Checks are the pass/fail rules of a scenario, evaluated by verdict.
type Checks struct {
	Thresholds  []Threshold  `json:"thresholds,omitempty"`
	Comparisons []Comparison `json:"comparisons,omitempty"`
	Baseline    *Baseline    `json:"baseline,omitempty"`
	Gate        Gate         `json:"gate"`
}

// Gate bounds the sequential extension: when a check's interval straddles
// its bound, its points get more trials (in rounds of measurement.trials,
// interleaved), up to MaxExtraTrials per point and MaxExtraTime in all.
type Gate struct {
	MaxExtraTrials int           `json:"max_extra_trials"`
	MaxExtraTime   time.Duration `json:"max_extra_time"`
	// RequireGated turns a check that was not gated (it could not detect
	// the change it exists for) from a pass into inconclusive, exit 4.
	RequireGated bool `json:"require_gated,omitempty"`
}

// Selector restricts a check to some models and sweep points. Empty fields
// select everything. At maps a coordinate name (as in Point.Coords) to the
// accepted values, compared as canonical strings.
type Selector struct {
	Models []string            `json:"models,omitempty"`
	At     map[string][]string `json:"at,omitempty"`
}

// Threshold is an absolute bound, e.g. "p95 < 30ms". Value is in the
// metric's canonical unit (see result.Metrics: microseconds for times,
// inferences/s for throughput, a fraction for rates).
type Threshold struct {
	Text     string   `json:"text"` // as written, for reports
	Metric   string   `json:"metric"`
	Op       string   `json:"op"` // < <= > >= ==
	Value    float64  `json:"value"`
	Selector Selector `json:"selector"`
}

// Comparison requires candidate/reference of Metric to be at least MinRatio
// (or at most MaxRatio) at each selected sweep point.
type Comparison struct {
	Name      string  `json:"name"`
	Candidate string  `json:"candidate"` // alias
	Reference string  `json:"reference"` // alias
	Metric    string  `json:"metric"`
	MinRatio  float64 `json:"min_ratio,omitempty"`
	MaxRatio  float64 `json:"max_ratio,omitempty"`
	// UnchangedRatio, when > 0, is the ratio of arms that do not differ:
	// a fail is then a change from it, shown, whose ratio lies beyond the
	// bound (the baseline gate's "clear and large enough to matter").
	UnchangedRatio float64  `json:"unchanged_ratio,omitempty"`
	Selector       Selector `json:"selector"` // Models is ignored
	Alpha          float64  `json:"alpha"`    // default 0.01
}

// Baseline configures the history gate.
type Baseline struct {
	Path string `json:"path"`
	// Tolerances are signed fractions per metric: -0.05 means "may drop
	// 5%", +0.10 means "may rise 10%".
	Tolerances map[string]float64 `json:"tolerances,omitempty"`
	Metrics    []string           `json:"metrics"` // gated metrics
	// MetricsDefault says Metrics are DefaultGateMetrics because the
	// scenario named none: those of DefaultGateIfMeasured are then gated
	// only where measured.
	MetricsDefault bool    `json:"metrics_default,omitempty"`
	Confidence     float64 `json:"confidence"` // prediction-interval level, default 0.99
	Keep           int     `json:"keep"`       // history length, default 10
	MinRuns        int     `json:"min_runs"`   // runs before the PI gate is used, default 5
	// Testbed names the testbed the run is filed under (overridden by
	// --testbed and PERFSCEN_TESTBED); empty derives it from the hardware.
	Testbed string `json:"testbed,omitempty"`
	// Required turns "this testbed has no history" from a warning into an
	// environment failure (exit 3), for CI jobs that must be gated.
	Required bool `json:"required,omitempty"`
}

// Compare evaluates v op bound for a threshold's operator (< <= > >= ==);
// "==" allows a relative 1e-9 for float round-off in unit conversion. It
// is the one rule thresholds, abort conditions and searches judge by.
func Compare(v float64, op string, bound float64) (bool, error) {
	switch op {
	case "<":
		return v < bound, nil
	case "<=":
		return v <= bound, nil
	case ">":
		return v > bound, nil
	case ">=":
		return v >= bound, nil
	case "==":
		return math.Abs(v-bound) <= 1e-9*math.Max(math.Abs(v), math.Abs(bound)), nil
	}
	return false, fmt.Errorf("unknown operator %q", op)
}

// Holds is Compare for an operator already checked: an unknown one never
// holds.
func Holds(v float64, op string, bound float64) bool {
	ok, _ := Compare(v, op, bound)
	return ok
}
