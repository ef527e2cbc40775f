// Package runner runs a scenario plan end to end, as the perfscen command
// does, for Go programs: load a plan with scenario.LoadPlan, hand it to
// Run, read the figures and the verdict from the result.
//
// Run starts the embedded reference server when the plan asks for it and
// reaches every other server through its service kind (KServe v2 / Triton,
// OpenAI-compatible, …), checks what the scenario needs before any load,
// measures each point as perf_analyzer does (windows, stabilization, kept
// trials, server-side breakdown), and decides the checks: thresholds,
// interleaved same-run comparisons and the baseline gate, three ways
// (pass, fail, inconclusive). The plan model is runner/plan, the result
// model runner/result.
package runner
