package result

import (
	"math"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// SchemaVersion is the version of the result JSON document. Readers refuse
// documents with a newer version.
const SchemaVersion = 1

// Run status values.
const (
	StatusComplete    = "complete"    // every point measured
	StatusPartial     = "partial"     // stopped early (server died, fatal error)
	StatusInterrupted = "interrupted" // Ctrl-C / SIGTERM
	StatusFailed      = "failed"      // nothing measured: the run could not start (server unreachable)
)

// Point status values.
const (
	PointStable   = "stable"
	PointUnstable = "unstable" // did not stabilize within max trials
	PointFailed   = "failed"   // could not be measured (server error, aborted)
	PointPartial  = "partial"  // interrupted mid-measurement
	PointImported = "imported" // came from a perf_analyzer file; no trials
)

// Uncounted reports whether p carries no request counts, as a point
// imported from a perf_analyzer CSV does (its status imported, or the
// status perfscen's own CSV recorded, such as unstable): a zero count
// there is absent, not "nothing finished".
func (p *Point) Uncounted() bool {
	return p.Status == PointImported || p.Summary.IsAbsent("requests")
}

// Run is one scenario run.
type Run struct {
	SchemaVersion int `json:"schema_version"`
	// RunID identifies this run, so one result file is never recorded
	// twice in a baseline history.
	RunID        string `json:"run_id,omitempty"`
	Scenario     string `json:"scenario"`
	ScenarioPath string `json:"scenario_path,omitempty"`
	// ScenarioFile and BaselinePath are the scenario file and the baseline
	// file the run was gated against, as absolute paths: ScenarioPath is
	// as the command line gave it, relative to a working directory the
	// file does not record.
	ScenarioFile string `json:"scenario_file,omitempty"`
	BaselinePath string `json:"baseline_path,omitempty"`
	ScenarioHash string `json:"scenario_hash,omitempty"`
	// Overrides are the --set path=value settings the scenario file was
	// run with: what was measured is the file with them. A baseline files
	// such runs apart (baseline.TestbedID).
	Overrides   []string    `json:"overrides,omitempty"`
	Source      string      `json:"source"` // "perfscen", "perf_analyzer-csv", "perf_analyzer-log", "genai-perf-csv", "aiperf-json", "aiperf-jsonl"
	Environment Environment `json:"environment"`
	Started     time.Time   `json:"started"`
	Finished    time.Time   `json:"finished"`
	Status      string      `json:"status"`
	// Errors are run-level failures (server unreachable, killed mid-run).
	Errors []string `json:"errors,omitempty"`
	// Notes are run-level remarks that change no figure, e.g. a server
	// extension the scenario did not need and the server lacks.
	Notes  []string `json:"notes,omitempty"`
	Points []Point  `json:"points"`
	// Agents are the load hosts of a distributed run (perfscen run
	// --agents): every figure above is their windows merged.
	Agents []Agent `json:"agents,omitempty"`
	// Verdict is the run's checks and outcome; absent in files imported
	// from perf_analyzer and in results written before it was recorded.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Agent is one load host of a distributed run.
type Agent struct {
	Index   int    `json:"index"`
	Name    string `json:"name"`
	Host    string `json:"host,omitempty"`
	Address string `json:"address,omitempty"`
	Version string `json:"version"`
	// ClockOffsetNs is the agent's clock minus the coordinator's, as last
	// measured; ClockErrorNs bounds the error of that measurement (half
	// the shortest round trip) and so how far the agent's windows may lie
	// from the coordinator's boundaries.
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	ClockErrorNs  int64 `json:"clock_error_ns"`
	RoundTripNs   int64 `json:"round_trip_ns"`
	// Windows and WindowBytes are the window reports it sent and their
	// size on the wire.
	Windows     int64 `json:"windows"`
	WindowBytes int64 `json:"window_bytes"`
}

// Environment identifies where a run happened.
type Environment struct {
	PerfscenVersion string `json:"perfscen_version"`
	Host            string `json:"host"`
	OS              string `json:"os"`
	Arch            string `json:"arch"`
	CPU             string `json:"cpu,omitempty"`
	// CPUID tells apart CPUs that one model name covers: the vendor,
	// family, model and stepping, and the cache sizes of the first CPU
	// (Linux: /proc/cpuinfo and /sys/devices/system/cpu/cpu0/cache).
	// Virtual machines often report a bare "AMD EPYC" for every
	// generation, whose figures differ by tens of percent.
	CPUID  string `json:"cpu_id,omitempty"`
	NumCPU int    `json:"num_cpu"`
	// MemoryGiB is the host's memory, rounded to GiB (0: unknown).
	MemoryGiB int `json:"memory_gib,omitempty"`
	// GPU lists the server's GPU UUIDs from its metrics, for the record.
	GPU string `json:"gpu,omitempty"`
	// GPUModel and GPUCount describe the GPUs that decide the figures:
	// the local driver's model names, and the count from the driver or
	// from the server's metrics.
	GPUModel string     `json:"gpu_model,omitempty"`
	GPUCount int        `json:"gpu_count,omitempty"`
	Server   ServerInfo `json:"server"`
	// Servers, in a run of several servers, describe each one (Key is its
	// name in the scenario); Server is then empty.
	Servers []ServerInfo `json:"servers,omitempty"`
	// Testbed is the name baselines are filed under, so figures from
	// different machines are never compared silently: a name given with
	// --testbed, PERFSCEN_TESTBED or the scenario's baseline.testbed, else
	// an id derived from CPU, memory, GPU and server (never the hostname;
	// DerivedTestbed).
	Testbed string `json:"testbed"`
	// TestbedSource says where Testbed came from: flag, env, scenario or
	// derived.
	TestbedSource string `json:"testbed_source,omitempty"`
}

// ServerInfo is what the server's metadata endpoint said.
type ServerInfo struct {
	// Key is the server's name under the scenario's servers ("" for server:).
	Key        string   `json:"key,omitempty"`
	URL        string   `json:"url,omitempty"`
	Name       string   `json:"name,omitempty"`
	Version    string   `json:"version,omitempty"`
	Extensions []string `json:"extensions,omitempty"`
	Embedded   bool     `json:"embedded,omitempty"`
	// InProcess marks a server run inside perfscen (kind triton_c_api):
	// its client time is building requests, not a protocol's.
	InProcess bool `json:"in_process,omitempty"`
	// Process says what the server's CPU figures per inference
	// (Metrics.Process) were read from, or why there are none.
	Process string `json:"process,omitempty"`
}

// Point is one model at one sweep point.
type Point struct {
	ID           string `json:"id"`
	Model        string `json:"model"` // alias
	ModelName    string `json:"model_name"`
	ModelVersion string `json:"model_version,omitempty"`
	// Server is the scenario's name of the point's server, with several.
	Server string `json:"server,omitempty"`
	// Mix is the mix the point belongs to: a member's (Model is then
	// mix/alias) or the whole mix's figures (Model is the mix's name).
	Mix          string             `json:"mix,omitempty"`
	Protocol     plan.Protocol      `json:"protocol"`
	SharedMemory plan.SharedMemory  `json:"shared_memory"`
	BatchSize    int                `json:"batch_size"`
	Mode         plan.LoadMode      `json:"mode"`
	Concurrency  int                `json:"concurrency,omitempty"`
	RequestRate  float64            `json:"request_rate,omitempty"`
	Shapes       map[string][]int64 `json:"shapes,omitempty"`
	Coords       map[string]string  `json:"coords,omitempty"`
	Status       string             `json:"status"`
	// Summary is perf_analyzer's merge of the kept trials: counts summed,
	// throughput as Σrequests ÷ Σduration, latencies from the merged
	// histogram. Reports and checks show Figures, not Summary.
	Summary Metrics `json:"summary"`
	// Figures are the point's figures as every report and check shows
	// them (Point.FigureMetrics: medians over the kept trials, counts and maxima
	// pooled). They are derived: written with the file for its readers,
	// and recomputed from the trials whenever perfscen reads one.
	Figures *Metrics `json:"figures,omitempty"`
	// Trials are the windows kept after stabilization; statistics use them.
	Trials []Trial `json:"trials,omitempty"`
	// Windows are every measured window, stabilization included, for
	// diagnosis; Trials are a suffix of these.
	Windows    []Window   `json:"windows,omitempty"`
	Errors     ErrorInfo  `json:"errors"`
	Validation Validation `json:"validation"`
	// LateSends counts request-rate sends that left after their scheduled
	// time (latency still counts from the schedule).
	LateSends int64 `json:"late_sends,omitempty"`
	// EngineSeries are the LLM engine's gauges as scraped while the
	// point ran, from its first window's start (at most a few hundred,
	// evenly thinned): what the HTML report plots over the run.
	EngineSeries []EngineSample `json:"engine_series,omitempty"`
	Notes        []string       `json:"notes,omitempty"`
	// Search names the search a probe point belongs to; Searched, on a
	// search's result point, is what the search found.
	Search   string         `json:"search,omitempty"`
	Searched *SearchOutcome `json:"searched,omitempty"`
	// Columns keeps, for an imported point, every column of its source
	// row as written (perf_analyzer's "Network+Server Send/Recv", cache
	// hits and misses, extra percentiles included), whether or not
	// perfscen has a field for it.
	Columns map[string]string `json:"columns,omitempty"`
}

// Trial is one kept measurement window.
type Trial struct {
	Index     int           `json:"index"`
	Start     time.Time     `json:"start"`
	Duration  time.Duration `json:"duration_ns"`
	Metrics   Metrics       `json:"metrics"`
	Histogram string        `json:"histogram,omitempty"` // HDR V2 compressed, base64; values in microseconds
	// Disturbance is the trial's window's (see Window.Disturbance).
	Disturbance *Disturbance `json:"disturbance,omitempty"`
}

// Window is one measurement window's headline figures.
type Window struct {
	Index      int           `json:"index"`
	Duration   time.Duration `json:"duration_ns"`
	Throughput float64       `json:"throughput"`
	LatencyUs  float64       `json:"latency_us"` // the stability latency (percentile or average)
	Requests   int64         `json:"requests"`
	Errors     int64         `json:"errors"`
	Kept       bool          `json:"kept"` // counted as a trial
	// Disturbance is how busy the machine was with other work during
	// the window (absent where /proc cannot be read).
	Disturbance *Disturbance `json:"disturbance,omitempty"`
}

// Disturbance is how busy the machine was apart from perfscen itself (and
// the embedded server, which runs in its process): fractions of all CPUs.
type Disturbance struct {
	// OtherCPU is the share of all CPUs used by other processes.
	OtherCPU float64 `json:"other_cpu"`
	// Steal is the share of CPU time the hypervisor gave to other guests.
	Steal float64 `json:"steal"`
	// Load1 is the 1-minute load average at the end.
	Load1 float64 `json:"load1"`
	// RunQueueWait is how long perfscen's own threads (the embedded
	// server's included, but not its spinning precise-sleep thread, whose
	// work grows with a slower model) waited runnable for a CPU, per unit of time they
	// ran: 0.5 means every 10 ms on a CPU cost 5 ms in the run queue.
	// Unlike OtherCPU it does not saturate on a full machine, where one
	// more busy neighbour still lengthens the queue. Absent where
	// /proc/self/task/*/schedstat cannot be read.
	RunQueueWait *float64 `json:"run_queue_wait,omitempty"`
	// CPUPressure is the share of wall time during which some runnable
	// task on the machine waited for a CPU (/proc/pressure/cpu "some");
	// absent without PSI.
	CPUPressure *float64 `json:"cpu_pressure,omitempty"`
	// WakeupDelay is how long a thread that woke up waited for a CPU
	// during the window: the delay each wake-up on a request's path pays
	// (internal/wakeprobe). Absent where the kernel gives no per-thread
	// schedstat, and in results recorded before it was measured.
	WakeupDelay *WakeupDelay `json:"wakeup_delay_us,omitempty"`
	// ServerCPU is the share of all CPUs the measured server process used
	// during the window, where it runs on this machine apart from
	// perfscen (Metrics.Process found it): it is taken out of OtherCPU,
	// since the server under test is no neighbour. Absent otherwise.
	ServerCPU *float64 `json:"server_cpu,omitempty"`
	// GEMVUs is the mean CPU time one run of the wake-up probe's fixed
	// kernel (a matrix-vector product over 1 MiB of weights,
	// internal/wakeprobe) took during the window, µs: how fast the
	// machine ran inference-shaped work (a host that lends a vCPU's core
	// to other guests, lowers its clock or crowds its caches makes every
	// CPU time longer). Absent without the probe.
	GEMVUs *float64 `json:"gemv_us,omitempty"`
	// GEMVUsByCPU is GEMVUs on each CPU apart, indexed by CPU id, 0 where
	// the kernel ran fewer than twice on that CPU in the window: the
	// probe takes the CPUs in turn, since a vCPU's speed moves on its own
	// (internal/wakeprobe). Absent with a single CPU, or without pinning.
	GEMVUsByCPU []float64 `json:"gemv_us_by_cpu,omitempty"`
	// LegacyKernelUs is what results recorded before the matrix-vector
	// kernel hold: the mean CPU time of a smaller kernel that ran in the
	// first-level cache. Read, never compared with GEMVUs.
	LegacyKernelUs *float64 `json:"kernel_us,omitempty"`
}

// WakeupDelay is the distribution of a window's wake-up delays, in µs.
type WakeupDelay struct {
	Mean float64 `json:"mean"`
	// Quantiles holds the delay at each of WakeupQuantiles, in order.
	Quantiles []float64 `json:"quantiles"`
	// N is how many wake-ups the window held.
	N uint64 `json:"n"`
	// Buckets is the whole distribution, [bucket, count] for each nonzero
	// bucket of the probe's histogram (internal/wakeprobe: bucket 0 holds
	// delays under 1 µs, bucket 1+8p+s those from 2^p µs plus s eighths
	// of it): what a counterfactual draws delays from. Absent in results
	// recorded before it was kept.
	Buckets [][2]uint64 `json:"buckets,omitempty"`
}

// WakeupQuantiles are the quantiles a WakeupDelay records: enough of the
// tail to read the delay at 1 − (1−q)/m for a latency quantile q and a
// few wake-ups m per request (internal/verdict's disturbance rule).
var WakeupQuantiles = []float64{0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999}

// At is the delay at quantile q: read from the whole distribution where
// the window kept it (Buckets), else interpolated between the recorded
// quantiles (the largest recorded one beyond them, the median below).
// Interpolation can be far off in a long tail: with 10% of wake-ups at
// 3 ms and the rest at 20 µs, the 87.5% quantile interpolated between the
// 75% and 90% ones reads 2.5 ms where it is 20 µs.
func (w *WakeupDelay) At(q float64) float64 {
	if v, ok := w.fromBuckets(q); ok {
		return v
	}
	qs := WakeupQuantiles
	if len(w.Quantiles) != len(qs) {
		return 0
	}
	if q <= qs[0] {
		return w.Quantiles[0]
	}
	for i := 1; i < len(qs); i++ {
		if q <= qs[i] {
			f := (q - qs[i-1]) / (qs[i] - qs[i-1])
			return w.Quantiles[i-1] + f*(w.Quantiles[i]-w.Quantiles[i-1])
		}
	}
	return w.Quantiles[len(qs)-1]
}

// fromBuckets is the delay at quantile q of the kept distribution: the
// middle of the bucket holding the ⌈qN⌉-th delay.
func (w *WakeupDelay) fromBuckets(q float64) (float64, bool) {
	var n uint64
	for _, b := range w.Buckets {
		n += b[1]
	}
	if n == 0 {
		return 0, false
	}
	rank := max(uint64(math.Ceil(q*float64(n))), 1)
	var seen uint64
	for _, b := range w.Buckets {
		seen += b[1]
		if seen >= rank {
			lo, hi := WakeupBucketBounds(int(b[0]))
			return (lo + hi) / 2, true
		}
	}
	lo, hi := WakeupBucketBounds(int(w.Buckets[len(w.Buckets)-1][0]))
	return (lo + hi) / 2, true
}

// Draws returns the kept distribution as delays (µs, each bucket's
// middle) with their counts, for drawing; nil without Buckets.
func (w *WakeupDelay) Draws() (us []float64, counts []uint64) {
	for _, b := range w.Buckets {
		lo, hi := WakeupBucketBounds(int(b[0]))
		us = append(us, (lo+hi)/2)
		counts = append(counts, b[1])
	}
	return us, counts
}

// WakeupBucketBounds is the range of delays (µs) bucket i of the wake-up
// probe's histogram holds: bucket 0 under 1 µs; above, each power of two
// of microseconds in eighths (internal/wakeprobe keeps the same layout).
func WakeupBucketBounds(i int) (lo, hi float64) {
	if i <= 0 {
		return 0, 1
	}
	pow, sub := (i-1)/8, (i-1)%8
	base := math.Exp2(float64(pow))
	step := base / 8
	return base + float64(sub)*step, base + float64(sub+1)*step
}

// ErrorInfo keeps the count, the first distinct messages, and every
// failure counted by class, the most frequent first.
type ErrorInfo struct {
	Count   int64        `json:"count"`
	First   []string     `json:"first,omitempty"`
	Classes []ErrorClass `json:"classes,omitempty"`
}

// ErrorClass counts the failures of one kind (transport.Class): with an
// example message, the first seen.
type ErrorClass struct {
	Class   string `json:"class"`
	Count   int64  `json:"count"`
	Example string `json:"example,omitempty"`
}

// Dominant is the most frequent class of failure, if any.
func (e ErrorInfo) Dominant() (ErrorClass, bool) {
	if len(e.Classes) == 0 {
		return ErrorClass{}, false
	}
	return e.Classes[0], true
}

// Validation summarizes output checks at a point.
type Validation struct {
	Enabled    bool     `json:"enabled"`
	Checked    int64    `json:"checked"`
	Mismatches int64    `json:"mismatches"`
	First      []string `json:"first,omitempty"`
	Sampled    bool     `json:"sampled,omitempty"`
}

// Metrics are the figures of one window, trial or point. Times are in
// microseconds (perf_analyzer's unit), throughput in inferences per second.
type Metrics struct {
	Throughput   float64 `json:"throughput"`
	Requests     int64   `json:"requests"`
	Errors       int64   `json:"errors"`
	ErrorRate    float64 `json:"error_rate"` // errors / (requests + errors)
	LatencyAvgUs float64 `json:"latency_avg_us"`
	LatencyStdUs float64 `json:"latency_std_us"`
	LatencyMinUs float64 `json:"latency_min_us"`
	P50Us        float64 `json:"p50_us"`
	P90Us        float64 `json:"p90_us"`
	P95Us        float64 `json:"p95_us"`
	P99Us        float64 `json:"p99_us"`
	LatencyMaxUs float64 `json:"latency_max_us"`
	// Client-side split, average per request: HTTP send+receive (gRPC
	// marshal+unmarshal) and the time waiting for the response.
	ClientSendRecvUs float64 `json:"client_send_recv_us"`
	ClientWaitUs     float64 `json:"client_wait_us"`
	// Decoupled models only (several responses per request, on a gRPC
	// stream): responses carrying data, their rate, and the average time
	// from a request to its first response. Latency above runs to the
	// final response, as in perf_analyzer.
	Responses          int64   `json:"responses,omitempty"`
	ResponseThroughput float64 `json:"response_throughput,omitempty"`
	FirstResponseAvgUs float64 `json:"first_response_avg_us,omitempty"`
	// Sequences counts the sequences that ended (their last request
	// answered), for sequence models: perf_analyzer's "Sequence count".
	Sequences int64 `json:"sequences,omitempty"`
	// Delayed counts the successful requests of these windows that found
	// no free worker at their scheduled time and waited for one
	// (request-rate modes): perf_analyzer's delayed requests.
	Delayed int64        `json:"delayed,omitempty"`
	Server  *ServerStats `json:"server,omitempty"`
	// Process is the server process's own use of the CPUs, per inference
	// (absent where its process could not be found or measured).
	Process *ProcessStats `json:"process,omitempty"`
	GPU     *GPUMetrics   `json:"gpu,omitempty"`
	// LLM holds token-level figures of openai-kind runs.
	LLM *LLMMetrics `json:"llm,omitempty"`
	// ScheduleError is how late open-loop requests left against their
	// schedule (send − due), every request; absent in closed-loop modes.
	ScheduleError *Distribution `json:"schedule_error,omitempty"`
	// ScheduleWait is how those sends waited for their instants, the
	// least precise of a window's: "realtime" (a SCHED_FIFO thread),
	// "short-slice" (an ordinary thread on a 100 µs slice) or "fair"
	// (neither was granted). Absent where sends keep no fine schedule.
	ScheduleWait string `json:"schedule_wait,omitempty"`
	// MaxConcurrency and MaxRequestRate are the value a search found, on
	// its result point only.
	MaxConcurrency *float64 `json:"max_concurrency,omitempty"`
	MaxRequestRate *float64 `json:"max_request_rate,omitempty"`
	// Absent names (by their JSON keys, e.g. "latency_avg_us") the
	// figures the source did not carry: an imported perf_analyzer CSV has
	// no request count, and without --verbose-csv no average latency. They
	// are left out of the JSON and have no Value, never a 0 that reads
	// as a measurement.
	Absent []string `json:"absent,omitempty"`
}

// ServerStats is the server-side breakdown from statistics deltas, averaged
// per successful request, as perf_analyzer reports it.
type ServerStats struct {
	RequestCount    int64   `json:"request_count"`
	InferenceCount  int64   `json:"inference_count"`
	ExecutionCount  int64   `json:"execution_count"`
	AvgRequestUs    float64 `json:"avg_request_us"`
	QueueUs         float64 `json:"queue_us"`
	ComputeInputUs  float64 `json:"compute_input_us"`
	ComputeInferUs  float64 `json:"compute_infer_us"`
	ComputeOutputUs float64 `json:"compute_output_us"`
	// Reset is set when counters went backwards (server restarted) during
	// the window; the figures above are then not trustworthy and zero.
	Reset bool `json:"reset,omitempty"`
}

// ProcessStats is how much of the machine the server's process used per
// inference during a window: read from the kernel's per-thread counters
// of the server's threads (the embedded server's model instances, a
// process found on this machine, or named by PID or cgroup) or, for a
// server elsewhere, its process_cpu_seconds_total.
//
// A busy machine stretches a CPU-bound model's wall-clock compute time by
// the time its threads wait for a CPU; CPUUs is the time they ran, which
// contention leaves where the build put it (bar cache and frequency
// effects), and RunQueueUs is the wait, which says how much of a slower
// wall-clock figure the machine accounts for.
type ProcessStats struct {
	// CPUUs is CPU time per inference, µs.
	CPUUs float64 `json:"cpu_us"`
	// RunQueueUs is the time the threads waited runnable for a CPU per
	// inference, µs (nil where the source cannot see it).
	RunQueueUs *float64 `json:"run_queue_us,omitempty"`
	// PreemptUs is the part of RunQueueUs that followed preemptions
	// rather than wake-ups (each thread's wait shared out by its
	// involuntary and voluntary context switches): the time-slicing of
	// work in progress. A wake-up's wait is often off a request's path
	// (an idle runtime thread woken to look for work); a preemption's is
	// in the middle of work (nil where the switches cannot be read, and
	// for the embedded server, whose counted threads are its model
	// instances', on their requests' path whatever woke them).
	PreemptUs *float64 `json:"preempt_us,omitempty"`
	// Instructions retired per inference (nil without hardware counters).
	Instructions *float64 `json:"instructions,omitempty"`
	// Work is CPUUs divided by the window's Disturbance.GEMVUs: CPU time
	// per inference in units of the CPU time the probe's matrix-vector
	// kernel took in the same seconds, which a slower vCPU does not move
	// (nil without the probe).
	Work *float64 `json:"work_gemv,omitempty"`
	// WorkByCPU says Work divided each CPU's share of the CPU time by that
	// CPU's own kernel time (CPUUsByCPU, Disturbance.GEMVUsByCPU), not
	// all of it by the machine-wide mean.
	WorkByCPU bool `json:"work_by_cpu,omitempty"`
	// CPUUsByCPU is CPUUs shared out by the CPU the threads ran on,
	// sampled about every 100 ms, indexed by CPU id (µs per inference of
	// the sampled time: it need not add up to CPUUs). Absent where the
	// threads were not sampled (no probe).
	CPUUsByCPU []float64 `json:"cpu_us_by_cpu,omitempty"`
	// LegacyWork is the work per inference of results recorded before
	// the matrix-vector kernel, in units of the earlier kernel: read,
	// never compared with Work.
	LegacyWork *float64 `json:"work,omitempty"`
	// Inferences is what the window's figures are divided by: the
	// server's own count where it keeps one, else the client's.
	Inferences int64 `json:"inferences"`
	// Threads is how many threads were counted at the window's end.
	Threads int `json:"threads,omitempty"`
}

// GPUMetrics are scraped from the server's Prometheus endpoint.
type GPUMetrics struct {
	UtilizationAvg float64 `json:"utilization_avg"` // fraction 0..1
	MemoryUsedMax  float64 `json:"memory_used_max_bytes"`
	MemoryTotalMax float64 `json:"memory_total_max_bytes"`
	PowerAvgWatts  float64 `json:"power_avg_watts"`
}

// The values of Metrics.ScheduleWait.
const (
	ScheduleWaitRealtime   = "realtime"
	ScheduleWaitShortSlice = "short-slice"
	ScheduleWaitFair       = "fair"
)
