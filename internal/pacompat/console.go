package pacompat

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// The console sections follow perf_analyzer r24.05: PrerunReport
// (perf_analyzer.cc), the per-level report (inference_profiler.cc Report,
// ReportClientSideStats, ReportServerSideStats) and WriteReport's summary,
// spaces at line ends included.

// delayPctThreshold is perf_analyzer's DELAY_PCT_THRESHOLD (constants.h):
// the share of delayed requests, in percent, over which a level is said
// not to have kept up with its request rate.
const delayPctThreshold = 1.0

// Settings writes "*** Measurement Settings ***".
func Settings(w io.Writer, p *Params) {
	fmt.Fprintln(w, "*** Measurement Settings ***")
	if p.ServiceKind == "triton" || p.UsingBatchSize {
		fmt.Fprintf(w, "  Batch size: %d\n", p.BatchSize)
	}
	fmt.Fprintf(w, "  Service Kind: %s\n", kindNames[p.ServiceKind])
	if p.RequestCount != 0 {
		fmt.Fprintf(w, "  Sending a total of %d requests\n", p.RequestCount)
	} else {
		fmt.Fprintf(w, "  Using \"%s\" mode for stabilization\n", p.MeasurementMode)
		if p.Percentile == -1 {
			fmt.Fprintln(w, "  Stabilizing using average latency")
		} else {
			fmt.Fprintf(w, "  Stabilizing using p%d latency\n", p.Percentile)
		}
		if p.MeasurementMode == "time_windows" {
			fmt.Fprintf(w, "  Measurement window: %d msec\n", p.MeasurementIntervalMs)
		} else {
			fmt.Fprintf(w, "  Minimum number of samples in each window: %d\n", p.MeasurementRequestCount)
		}
	}
	if p.Concurrency.End != 1 {
		fmt.Fprintf(w, "  Latency limit: %d msec\n", p.LatencyThresholdMs)
		if p.Concurrency.End != noLimit {
			fmt.Fprintf(w, "  Concurrency limit: %d concurrent requests\n", max(p.Concurrency.Start, p.Concurrency.End))
		}
	}
	if p.RequestRate.End != 1 {
		fmt.Fprintf(w, "  Latency limit: %d msec\n", p.LatencyThresholdMs)
		if p.RequestRate.End != noLimit {
			fmt.Fprintf(w, "  Request Rate limit: %s requests per seconds\n", num(math.Max(p.RequestRate.Start, p.RequestRate.End)))
		}
	}
	if p.UsingRequestRateRange {
		if p.Distribution == "poisson" {
			fmt.Fprintln(w, "  Using poisson distribution on request generation")
		} else {
			fmt.Fprintln(w, "  Using uniform distribution on request generation")
		}
	}
	if p.BinarySearch {
		fmt.Fprintln(w, "  Using Binary Search algorithm")
	}
	if p.IsAsync() {
		fmt.Fprintln(w, "  Using asynchronous calls for inference")
	} else {
		fmt.Fprintln(w, "  Using synchronous calls for inference")
	}
	fmt.Fprintln(w)
}

// kindNames are BackendKindToString's.
var kindNames = map[string]string{
	"triton": "TRITON", "tfserving": "TENSORFLOW_SERVING", "torchserve": "TORCHSERVE",
	"triton_c_api": "TRITON_C_API", "openai": "OPENAI", "dynamic_grpc": "DYNAMIC_GRPC",
}

// serverStats says perf_analyzer reports server statistics for the kind:
// Triton's, over the network or in process.
func (p *Params) serverStats() bool {
	return p.ServiceKind == "triton" || p.ServiceKind == "triton_c_api"
}

// LevelStart writes the line perf_analyzer prints as it moves to a level.
func LevelStart(w io.Writer, pt *plan.Point) {
	if pt.Load.Mode == plan.LoadRequestRate {
		fmt.Fprintf(w, "Request Rate: %s inference requests per seconds\n", num(pt.Load.Rate))
		return
	}
	fmt.Fprintf(w, "Request concurrency: %d\n", max(pt.Load.Concurrency, 1))
}

// Pass writes -v's line for one measurement window.
func Pass(w io.Writer, p *Params, n int, m *result.Metrics) {
	if m.Requests == 0 && m.Errors > 0 {
		fmt.Fprintf(w, "  Pass [%d] cb::Error: %d request(s) failed, none succeeded\n", n, m.Errors)
		return
	}
	fmt.Fprintf(w, "  Pass [%d] throughput: %s infer/sec. ", n, num(m.Throughput))
	if p.Percentile > 0 {
		fmt.Fprintf(w, "p%d latency: %d usec\n", p.Percentile, us(percentileOf(m, p.Percentile)))
		return
	}
	fmt.Fprintf(w, "Avg latency: %d usec (std %d usec). \n", us(m.LatencyAvgUs), us(m.LatencyStdUs))
}

// percentileOf reads the figures perfscen keeps per window; another
// percentile is judged on the nearest kept one above it.
func percentileOf(m *result.Metrics, q int) float64 {
	switch {
	case q <= 50:
		return m.P50Us
	case q <= 90:
		return m.P90Us
	case q <= 95:
		return m.P95Us
	}
	return m.P99Us
}

// Level writes a measured level's Client and Server sections from its
// kept windows merged (perf_analyzer reports the merge of its last three).
func Level(w io.Writer, p *Params, pt *result.Point) {
	m := &pt.Summary
	fmt.Fprintln(w, "  Client: ")
	fmt.Fprintf(w, "    Request count: %d\n", m.Requests)
	if pt.Mode == plan.LoadRequestRate && m.Requests > 0 {
		// perf_analyzer's rule (inference_profiler.cc): the delayed share of
		// the merged windows' requests over DELAY_PCT_THRESHOLD, 1%. The
		// send rate is taken from the requests that completed in them.
		if pct := 100 * float64(m.Delayed) / float64(m.Requests); pct > delayPctThreshold {
			sendRate := m.Throughput / float64(max(p.BatchSize, 1)) * float64(m.Requests+m.Errors) / float64(m.Requests)
			fmt.Fprintf(w, "    Avg send request rate: %.2f infer/sec\n", sendRate)
			fmt.Fprintf(w, "    [WARNING] Perf Analyzer was not able to keep up with the desired request rate. %.2f%% of the requests were delayed. \n", pct)
		}
	}
	if p.sequences() {
		perSec := 0.0
		if m.Requests > 0 {
			perSec = float64(m.Sequences) * m.Throughput / float64(m.Requests*int64(max(p.BatchSize, 1)))
		}
		fmt.Fprintf(w, "    Sequence count: %d (%s seq/sec)\n", m.Sequences, num(perSec))
	}
	fmt.Fprintf(w, "    Throughput: %s infer/sec\n", num(m.Throughput))
	if m.Responses > 0 {
		fmt.Fprintf(w, "    Response Throughput: %s infer/sec\n", num(m.ResponseThroughput))
	}
	if p.Percentile == -1 {
		fmt.Fprintf(w, "    Avg latency: %d usec (standard deviation %d usec)\n", us(m.LatencyAvgUs), us(m.LatencyStdUs))
	}
	for _, q := range Percentiles(p) {
		fmt.Fprintf(w, "    p%d latency: %d usec\n", q, us(PercentileUs(pt, q)))
	}
	if m.Responses == 0 && p.ServiceKind == "triton_c_api" {
		fmt.Fprintln(w, "    ") // perf_analyzer's C API mode has no client library line, only its indent
	} else if m.Responses == 0 {
		// perfscen times send and receive together: -v's split shows it
		// all as the send (marshal), the receive as 0.
		sr, wait := us(m.ClientSendRecvUs), us(m.ClientWaitUs)
		switch {
		case pt.Protocol == plan.ProtocolGRPC && p.Verbose:
			fmt.Fprintf(w, "    Avg gRPC time: %d usec (marshal %d usec + response wait %d usec + unmarshal 0 usec)\n", sr+wait, sr, wait)
		case pt.Protocol == plan.ProtocolGRPC:
			fmt.Fprintf(w, "    Avg gRPC time: %d usec ((un)marshal request/response %d usec + response wait %d usec)\n", sr+wait, sr, wait)
		case p.Verbose:
			fmt.Fprintf(w, "    Avg HTTP time: %d usec (send %d usec + response wait %d usec + receive 0 usec)\n", sr+wait, sr, wait)
		default:
			fmt.Fprintf(w, "    Avg HTTP time: %d usec (send/recv %d usec + response wait %d usec)\n", sr+wait, sr, wait)
		}
	}
	if s := m.Server; s != nil && !s.Reset && p.serverStats() {
		fmt.Fprintln(w, "  Server: ")
		if s.RequestCount == 0 {
			fmt.Fprintf(w, "    Request count: 0\n")
		} else {
			req, q := us(s.AvgRequestUs), us(s.QueueUs)
			in, inf, out := us(s.ComputeInputUs), us(s.ComputeInferUs), us(s.ComputeOutputUs)
			overhead := req - q - in - inf - out
			if req < q+in+inf+out {
				overhead = 0
			}
			fmt.Fprintf(w, "    Inference count: %d\n", s.InferenceCount)
			fmt.Fprintf(w, "    Execution count: %d\n", s.ExecutionCount)
			fmt.Fprintf(w, "    Successful request count: %d\n", s.RequestCount)
			fmt.Fprintf(w, "    Avg request latency: %d usec (overhead %d usec + queue %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
				req, overhead, q, in, inf, out)
		}
		fmt.Fprintln(w)
	}
	if p.Metrics {
		fmt.Fprintln(w, "  Server Prometheus Metrics: ")
		gpu(w, m.GPU)
	}
}

// gpu writes the GPU metrics section; perfscen keeps one figure for all
// of a server's GPUs, which it names "gpu".
func gpu(w io.Writer, g *result.GPUMetrics) {
	rows := []struct {
		title string
		value func(*result.GPUMetrics) string
	}{
		{"Avg GPU Utilization:", func(g *result.GPUMetrics) string { return num(100*g.UtilizationAvg) + "%" }},
		{"Avg GPU Power Usage:", func(g *result.GPUMetrics) string { return num(g.PowerAvgWatts) + " watts" }},
		{"Max GPU Memory Usage:", func(g *result.GPUMetrics) string { return num(g.MemoryUsedMax) + " bytes" }},
		{"Total GPU Memory:", func(g *result.GPUMetrics) string { return num(g.MemoryTotalMax) + " bytes" }},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "    %s\n", r.title)
		if g != nil {
			fmt.Fprintf(w, "      gpu : %s\n", r.value(g))
		}
	}
}

// Percentiles are the percentiles perf_analyzer reports: 50, 90, 95 and
// 99, and --percentile's when it is another, in ascending order.
func Percentiles(p *Params) []int {
	out := []int{50, 90, 95, 99}
	if p.Percentile > 0 && p.Percentile != 50 && p.Percentile != 90 && p.Percentile != 95 && p.Percentile != 99 {
		out = append(out, p.Percentile)
		sort.Ints(out)
	}
	return out
}

// PercentileUs is percentile q of a point's merged kept windows.
func PercentileUs(pt *result.Point, q int) float64 {
	m := &pt.Summary
	switch q {
	case 50:
		return m.P50Us
	case 90:
		return m.P90Us
	case 95:
		return m.P95Us
	case 99:
		return m.P99Us
	}
	v, _ := pt.KeptPercentileUs(float64(q))
	return v
}

// StabilizingUs is the latency perf_analyzer stabilizes on and sums up
// with: the chosen percentile, else the average.
func StabilizingUs(p *Params, pt *result.Point) float64 {
	if p.Percentile > 0 {
		return PercentileUs(pt, p.Percentile)
	}
	return pt.Summary.LatencyAvgUs
}

// Summary writes WriteReport's closing table of the reported levels, in
// the order they were measured.
func Summary(w io.Writer, p *Params, pts []*result.Point) {
	if len(pts) == 0 {
		return
	}
	if p.Percentile == -1 {
		fmt.Fprintln(w, "Inferences/Second vs. Client Average Batch Latency")
	} else {
		fmt.Fprintf(w, "Inferences/Second vs. Client p%d Batch Latency\n", p.Percentile)
	}
	for _, pt := range pts {
		if pt.Mode == plan.LoadRequestRate {
			fmt.Fprintf(w, "Request Rate: %s, ", num(pt.RequestRate))
		} else {
			fmt.Fprintf(w, "Concurrency: %d, ", pt.Concurrency)
		}
		fmt.Fprintf(w, "throughput: %s infer/sec, latency %d usec\n", num(pt.Summary.Throughput), us(StabilizingUs(p, pt)))
	}
}

// Unstable is perf_analyzer's message for a level that did not stabilize.
func Unstable(w io.Writer, p *Params, pt *result.Point) {
	if pt.Mode == plan.LoadRequestRate {
		fmt.Fprintln(w, "Failed to obtain stable measurement.")
		return
	}
	hint := "--measurement-interval"
	if p.MeasurementMode == "count_windows" {
		hint = "--measurement-request-count"
	}
	fmt.Fprintf(w, "Failed to obtain stable measurement within %d measurement windows for concurrency %d. Please try to increase the %s.\n",
		p.MaxTrials, pt.Concurrency, hint)
}

// OverLimit is perf_analyzer's message for a level at or over -l.
func OverLimit(w io.Writer, p *Params) {
	fmt.Fprintf(w, "Measured latency went over the set limit of %d msec. \n", p.LatencyThresholdMs)
}

// num prints a double as C++'s ostream does by default (%g, 6 digits).
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// us truncates microseconds to an integer, as perf_analyzer's ns/1000.
func us(v float64) uint64 {
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	return uint64(v)
}
