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
// names none: throughput and the latency percentiles users read first,
// and, at points where the server's process was measured, its work and
// instructions per inference (DefaultGateIfMeasured).
func DefaultGateMetrics() []string {
	return append([]string{MetricThroughput, MetricP50, MetricP95, MetricP99}, DefaultGateIfMeasured()...)
}

// DefaultGateIfMeasured are the default gate's metrics that only some
// points have: the figures a busy machine does not move, gated wherever
// they were measured (and passed over silently where they were not).
func DefaultGateIfMeasured() []string { return []string{MetricServerWork, MetricServerInstr} }
