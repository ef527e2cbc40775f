package verdict

import "github.com/perfscen/perfscen/runner/plan"

// Options tune the statistics; the zero value means the defaults.
type Options struct {
	// MinTrials is the fewest trials per arm a comparison may pass with
	// (default 10).
	MinTrials int
	// Resamples is the bootstrap size for ratio intervals (default 2000).
	Resamples int
	// AllowUnstable turns unstable points into warnings instead of
	// environment failures.
	AllowUnstable bool
	// FamilyAlpha caps the chance of any false baseline alarm in one run
	// (default 0.03: with a handful of gated metrics this keeps each one
	// below 1% false alarms in the simulation harness even when a run's job
	// effect moves several metrics together); each check also stays within
	// its own level.
	FamilyAlpha float64
	// MaxErrorRate is every point's error budget (a fraction; default 0)
	// and ModelMaxErrorRate overrides it by model alias.
	MaxErrorRate      float64
	ModelMaxErrorRate map[string]float64
	// RequireGated makes a check that was not gated keep the run from
	// passing: exit 4 instead of 0 (gate.require_gated, --require-gated).
	RequireGated bool
	// Look is which of MaxLooks sequential looks this evaluation is
	// (1-based); MaxLooks ≤ 1 means one look with the full α. See Settle.
	Look, MaxLooks int
}

func (o Options) errorBudget(model string) float64 {
	if v, ok := o.ModelMaxErrorRate[model]; ok {
		return v
	}
	return o.MaxErrorRate
}

// Default comparison and gate settings.
const (
	DefaultMinTrials   = plan.MinComparisonTrials
	DefaultResamples   = 2000
	DefaultFamilyAlpha = 0.03
	// CIConfidence is the level of the bootstrap ratio interval.
	CIConfidence = 0.95
)

func (o Options) withDefaults() Options {
	if o.MinTrials <= 0 {
		o.MinTrials = DefaultMinTrials
	}
	if o.Resamples < DefaultResamples {
		o.Resamples = DefaultResamples
	}
	if o.FamilyAlpha <= 0 {
		o.FamilyAlpha = DefaultFamilyAlpha
	}
	return o
}
