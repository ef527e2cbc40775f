// Package result is the measured-data model of a scenario run: points,
// trials (one per measurement window), latency figures, server-side
// breakdowns and the run environment, with its versioned JSON encoding.
// The runner and the perf_analyzer importer produce it; verdict and report
// read it.
package result
