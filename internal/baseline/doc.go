// Package baseline owns the baseline file: per scenario and testbed, a
// bounded history of run summaries (per-trial figures and histograms), the
// noise estimates derived from it, and safe concurrent updates.
package baseline
