// Package importer turns perf_analyzer's outputs (its -f CSV, plain or
// --verbose-csv, and its console log) into a result.Run, so numbers
// measured with perf_analyzer can be gated, compared and reported by perfscen.
package importer
