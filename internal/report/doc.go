// Package report renders a result.Run and its verdict.Verdict: console
// (perf_analyzer layout), CSV (perf_analyzer -f layout), JSON, JUnit,
// Markdown, GitHub annotations and self-contained HTML with SVG plots.
// Renderers are chosen from one registry; none computes statistics.
package report
