package plan

// Check defaults. scenario fills them into a Plan, verdict falls back on
// them for checks built outside a scenario (perfscen compare, baseline
// calibrate), and baseline uses them for history length and MDE figures:
// this is the one place they are defined.
const (
	// DefaultAlpha is the significance level of a model comparison's
	// two-sided test.
	DefaultAlpha = 0.01
	// DefaultConfidence is the baseline gate's prediction-interval level.
	DefaultConfidence = 0.99
	// DefaultKeep is how many history runs a baseline testbed keeps.
	DefaultKeep = 10
	// DefaultMinRuns is how many history runs the prediction-interval gate
	// needs; with fewer, fixed tolerances apply.
	DefaultMinRuns = 5
)

// DefaultGateMetrics are the metrics a baseline gates when the scenario
// names none: throughput and the latency percentiles users read first.
// (Names as in result.Metric*; plan cannot import result.)
func DefaultGateMetrics() []string { return []string{"throughput", "p50", "p95", "p99"} }
