// Package engine drives load against an inference server for each point of a
// plan.Plan and measures it the way perf_analyzer does: windows cut by
// completion time, the 3-window stability rule, then kept trials.
//
// # Owns
//
// Pacing (a pure Pacer), workers, the results stream with one owning
// aggregator goroutine, windows, stabilization, trials, interleaving of
// grouped points, server-statistics deltas and GPU metric scraping. It does
// not parse YAML, print, speak any server's protocol, or decide pass/fail.
//
// # Measurement (perf_analyzer §2)
//
// Warm-up: requests completing before the warm-up period ends are dropped.
// Windows then run back to back, each starting where the previous ended. A
// request belongs to the window its completion timestamp falls in, so a
// request in flight at a boundary counts in the window it completes in.
//
//   - time_windows: a window lasts Measurement.Window (perf_analyzer sleeps
//     1.2 × its interval; perfscen uses the stated length, and like
//     perf_analyzer divides by the measured window duration).
//   - count_windows: a window closes at the first completion at which it holds
//     Measurement.RequestCount successful requests and has lasted at least
//     Options.MinCountWindow (default 1 s, perf_analyzer's sleep granularity).
//
// Throughput is successful requests × batch size ÷ window seconds; the
// stabilizing latency is the average, or the Measurement.Percentile latency
// when set. After each window, once 3 exist, the last 3 are stable when none
// has zero throughput and both max/min ratios (throughput and latency) are at
// most 1 + stability_pct/100. For async loads perf_analyzer falls back to the
// throughput-only check; so does perfscen (plan.Load.Async). A point that is
// not stable after max_trials windows is result.PointUnstable; its last 3
// windows are kept as trials so it still has figures.
//
// Trials: the stable triple counts as the first 3 kept windows; measuring
// continues until max(trials, 3) windows are kept. Each kept window is one
// result.Trial with its own metrics and HDR histogram; the point summary
// merges them.
//
// Iterations mode (perf_analyzer --request-count): WarmupIterations requests
// are sent and dropped, then exactly Iterations requests are measured in one
// window from the first measured send to the last completion, which is
// marked stable.
//
// # Interleaving
//
// Units (a point, or the points of one mix step) sharing a non-zero Group
// run as follows: each unit first stabilizes on its own (its stabilization
// windows are recorded but not kept). Then, round after round, every unit
// of the group runs once, in plan order in even rounds and reversed in odd
// ones (A B, B A, A B …): start its load, drop the warm-up, measure exactly
// one window, stop. Each round adds one kept trial to each point, until
// every point has max(trials, 3). Machine drift during the comparison thus
// hits all points of the group alike, and a drift within a round favours
// neither arm of the pairs a comparison makes of each round's windows.
//
// # Mixes
//
// The points of one step of a mix (plan.Point.Together) are one unit: their
// sessions start from one epoch, so every member's windows are cut on the
// same boundaries and window k of every member covers the same seconds. A
// unit is stable when every member is, its kept windows are the same for
// every member, and in interleaved groups each round is one window of the
// whole unit. After a mix's members the result holds the whole mix's
// figures (mix.go): per window the members' requests merged, throughput
// summed, server figures summed.
//
// # Load
//
// Concurrency mode keeps exactly N requests outstanding with N goroutines,
// each sending its next request when the previous completes; this holds for
// async loads too (goroutines are the cheap way to keep N requests in flight
// in Go). Request-rate mode is open loop: a dispatcher stamps each request
// with its scheduled time from a Pacer and hands it to a worker pool
// (Load.MaxThreads workers, or grown on demand when 0); latency counts from
// the scheduled time, so a late send costs latency instead of hiding it
// (no coordinated omission), and sends leaving more than 1 ms late are
// counted in result.Point.LateSends.
//
// What a request is belongs to the point's service kind (internal/kinds):
// the engine asks the kind's Point for a Caller per worker and for the
// server's counters around windows; how a request is encoded, streamed or
// placed in shared memory is the kind's. Sequence models get a run-unique
// correlation id per sequence, with start/end flags on its first and last
// step (flat data is cut into sequences of 20, as perf_analyzer does).
// Validation compares outputs after the completion stamp, on every
// response for count windows and iterations; under time windows a
// validate.Sampler shared by the point's workers checks its first 100
// responses and then one in Options.ValidateEvery of each data entry's.
package engine
