package result

import (
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
)

// PointSearched is the status of a search's result point: it holds the
// value found, not a measurement of its own (its probes are the points
// measured).
const PointSearched = "searched"

// PointAborted is the status of a point stopped by an abort_on condition:
// a window showed it hopeless, so it was not measured to the end.
const PointAborted = "aborted"

// Probe outcomes: how a probe of a search was judged.
const (
	ProbeMeets        = "meets"        // the condition holds (its interval, or its figure, is on the right side)
	ProbeFails        = "fails"        // the condition does not hold
	ProbeInconclusive = "inconclusive" // the interval straddles the bound after every extra trial allowed; counted as failing
	ProbeUnstable     = "unstable"     // the probe did not stabilize; counted as failing
	ProbeAborted      = "aborted"      // an abort_on condition stopped it, confirmed over its windows; counted as failing
	// ProbeDisturbed: an abort_on condition stopped it while the machine
	// was disturbed (too busy, or markedly busier than during the
	// search's earlier probes at its load or above): counted as failing,
	// but not a judgement on the build, so the answer may be higher.
	ProbeDisturbed = "disturbed"
	ProbeFailed    = "failed" // it could not be measured; counted as failing
)

// SearchOutcome is what a search found, on its result point.
type SearchOutcome struct {
	// Condition is the bound as written, e.g. "p99 < 50ms".
	Condition string `json:"condition"`
	Method    string `json:"method"`
	Decide    string `json:"decide"`
	// Start, End and Step are the range searched (End 0: unbounded).
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Step  float64 `json:"step"`
	// Found says some load met the condition; Value is then the highest
	// load that did (the point's figure), else 0.
	Found bool    `json:"found"`
	Value float64 `json:"value"`
	// AllMet says the end of the range met it: the highest load meeting
	// the condition may lie beyond the range.
	AllMet bool `json:"all_met,omitempty"`
	// Failing is the lowest load probed that did not meet it (0: none).
	Failing float64 `json:"failing,omitempty"`
	// Probes are the loads probed, in the order they were measured.
	Probes []Probe `json:"probes"`
	// Message says what was found, for reports.
	Message string `json:"message"`
}

// Probe is one load a search measured and how it was judged.
type Probe struct {
	Level   float64 `json:"level"`
	Point   string  `json:"point"` // the probe's point id
	Outcome string  `json:"outcome"`
	// Value is the probe's figure for the condition's metric; Lo and Hi
	// its interval (DecideInterval), at Confidence, over Trials trials.
	Value      float64 `json:"value"`
	Lo         float64 `json:"lo,omitempty"`
	Hi         float64 `json:"hi,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	Trials     int     `json:"trials"`
	// ErrorRate is the share of the kept trials' requests that failed;
	// OverBudget says it exceeded the model's error budget
	// (max_error_rate), which fails the probe whatever its figure.
	ErrorRate  float64 `json:"error_rate,omitempty"`
	OverBudget bool    `json:"over_budget,omitempty"`
	// Disturbance names the contention that leaves a probe unjudged: the
	// machine's state when abort_on stopped a disturbed probe, or while an
	// unstable or unmeasured one was measured on a machine too busy for it.
	Disturbance string `json:"disturbance,omitempty"`
}

// Unjudged says whether a probe's outcome is no judgement on the build:
// it could not be measured, did not stabilize, stayed undecided or was
// stopped on a disturbed machine. A search counts such a probe as failing
// to stay on the safe side, but its answer may then be higher.
func (p Probe) Unjudged() bool {
	switch p.Outcome {
	case ProbeFailed, ProbeUnstable, ProbeInconclusive, ProbeDisturbed:
		return true
	}
	return false
}

// ConditionMetric is the metric the search's condition bounds and its unit
// (the unit of every probe's Value, Lo and Hi).
func (s *SearchOutcome) ConditionMetric() (metric, unit string) {
	if f := strings.Fields(strings.NewReplacer("<", " ", ">", " ", "=", " ").Replace(s.Condition)); len(f) > 0 {
		metric = f[0]
	}
	if mi, ok := plan.LookupMetric(metric); ok {
		return metric, mi.Unit
	}
	return metric, "fraction" // goodput_share
}
