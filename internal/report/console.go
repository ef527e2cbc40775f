package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

// Console writes one perf_analyzer-style block per point, a table of all
// points, the checks table and the closing PASS/FAIL line.
func Console(w io.Writer, run *result.Run, v *verdict.Verdict, opts Options) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "*** Scenario: %s (%s, %s) ***\n", run.Scenario, run.Source, run.Status)
	for _, e := range run.Errors {
		// A check that carries the error (run completed) says it, and
		// the summary line quotes it: each once.
		if !checkSays(v, e) {
			fmt.Fprintf(bw, "Run error: %s\n", e)
		}
	}
	for _, n := range run.Notes {
		fmt.Fprintf(bw, "Note: %s\n", n)
	}
	for _, s := range run.Environment.Servers {
		fmt.Fprintf(bw, "Server %s: %s\n", s.Key, ServerText(s))
	}
	if s := run.Environment.Server.Process; s != "" {
		fmt.Fprintf(bw, "Server process: %s\n", s)
	}
	for _, s := range run.Environment.Servers {
		if s.Process != "" {
			fmt.Fprintf(bw, "Server %s process: %s\n", s.Key, s.Process)
		}
	}
	model := ""
	for i := range run.Points {
		p := &run.Points[i]
		if p.Model != model {
			model = p.Model
			if p.Server != "" {
				fmt.Fprintf(bw, "\n*** Model: %s (%s on server %s) ***\n", p.Model, p.ModelName, p.Server)
			} else {
				fmt.Fprintf(bw, "\n*** Model: %s (%s) ***\n", p.Model, p.ModelName)
			}
		}
		fmt.Fprintln(bw)
		if p.Searched != nil {
			searchBlock(bw, p)
			continue
		}
		pointBlock(bw, p, inProcess(run, p.Server))
	}
	if len(run.Points) > 0 {
		fmt.Fprintln(bw, "\nPoints")
		if note := FiguresNote(run); note != "" {
			fmt.Fprintf(bw, "(%s)\n", note)
		}
		if err := table(bw, pointHeader, pointRows(run)); err != nil {
			return err
		}
		if rows := llmRows(run); rows != nil {
			fmt.Fprintln(bw, "\nLLM")
			if err := table(bw, llmHeader, rows); err != nil {
				return err
			}
		}
		if rows := workloadRows(run); rows != nil {
			fmt.Fprintln(bw, "\nLLM workload: by turn, the engine's figures, the schedule")
			if err := table(bw, workloadHeader, rows); err != nil {
				return err
			}
		}
	}
	if line := DisturbanceLine(run); line != "" {
		fmt.Fprintln(bw, line)
	}
	if v != nil {
		if len(v.Checks) > 0 {
			fmt.Fprintln(bw, "\nChecks")
			rows := make([][]string, len(v.Checks))
			for i, c := range v.Checks {
				rows[i] = rowOf(c).cells()
			}
			if err := table(bw, checkHeader, rows); err != nil {
				return err
			}
			quoted := summaryQuotes(v)
			for i, c := range v.Checks {
				says := c.Status == verdict.StatusFail || c.Status == verdict.StatusInconclusive || c.Status == verdict.StatusNotGated
				// The check the summary line quotes is said once, there.
				if c.Message != "" && says && i != quoted {
					fmt.Fprintf(bw, "  %s: %s\n", label(c), c.Message)
				}
				for _, warn := range checkWarnings(c) {
					fmt.Fprintf(bw, "  warning: %s\n", warningText(c, warn))
				}
			}
		}
		for _, n := range v.Notices {
			fmt.Fprintf(bw, "note: %s\n", n)
		}
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, colorLine(SummaryLine(v), opts.Color))
	}
	return bw.Flush()
}

// inProcess says whether the point's server (by its key; "" for the one
// server) ran inside perfscen.
func inProcess(run *result.Run, key string) bool {
	if key == "" && len(run.Environment.Servers) == 0 {
		return run.Environment.Server.InProcess
	}
	for _, s := range run.Environment.Servers {
		if s.Key == key {
			return s.InProcess
		}
	}
	return false
}

func colorLine(s string, color bool) string {
	if !color {
		return s
	}
	if strings.HasPrefix(s, "FAIL") {
		return ansiBold + ansiRed + s + ansiReset
	}
	if !strings.HasPrefix(s, "PASS") || strings.HasPrefix(s, "PASS —") {
		return ansiBold + ansiYellow + s + ansiReset
	}
	return ansiBold + ansiGreen + s + ansiReset
}

// pointBlock follows perf_analyzer's report (inference_profiler.cc
// ReportClientSideStats / ReportServerSideStats), trailing spaces included.
func pointBlock(w io.Writer, p *result.Point, inProc bool) {
	if p.Mode == plan.LoadRequestRate {
		fmt.Fprintf(w, "Request Rate: %s inference requests per seconds\n", paFloat(p.RequestRate))
	} else {
		fmt.Fprintf(w, "Request concurrency: %d\n", p.Concurrency)
	}
	fmt.Fprintf(w, "  Point: %s (batch %d, %s, shared memory %s, status %s)\n", p.ID, p.BatchSize, p.Protocol, p.SharedMemory, p.Status)
	figs := p.FigureMetrics()
	m := &figs
	if p.Status == result.PointFailed || m.Requests == 0 && m.Throughput == 0 && p.Status != result.PointStable && p.Status != result.PointImported {
		// A point that could not be measured shows no throughput or
		// latency: what its windows saw before the failure is not a
		// measurement of the server.
		fmt.Fprintf(w, "  No measurement (%s)\n", p.Status)
		if p.Errors.Count > 0 {
			fmt.Fprintf(w, "  Errors: %d%s\n", p.Errors.Count, dominantText(p.Errors))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  Note: %s\n", n)
		}
		return
	}
	if n := len(p.Trials); n > 0 {
		fmt.Fprintf(w, "  Figures: median of %d kept trial(s) (standard deviation: the median of the trials' own); counts and maxima over all of them\n", n)
	}
	fmt.Fprintf(w, "  Client: \n")
	fmt.Fprintf(w, "    Request count: %s\n", carried(m, "requests", strconv.FormatInt(m.Requests, 10)))
	if p.LateSends > 0 {
		// Counted over every window, stabilization included, unlike the
		// request count above (the kept trials): said so beside it.
		fmt.Fprintf(w, "    Delayed Request Count: %d (all windows, stabilization included)\n", p.LateSends)
	}
	fmt.Fprintf(w, "    Throughput: %s infer/sec\n", paFloat(m.Throughput))
	if m.IsAbsent("latency_avg_us") {
		fmt.Fprintf(w, "    Avg latency: %s\n", notCarried)
	} else {
		fmt.Fprintf(w, "    Avg latency: %s usec (standard deviation %s)\n", usec(m.LatencyAvgUs), carried(m, "latency_std_us", usec(m.LatencyStdUs)+" usec"))
	}
	for _, q := range []struct {
		n int
		v float64
	}{{50, m.P50Us}, {90, m.P90Us}, {95, m.P95Us}, {99, m.P99Us}} {
		fmt.Fprintf(w, "    p%d latency: %s usec\n", q.n, usec(q.v))
	}
	sr, wait := truncUs(m.ClientSendRecvUs), truncUs(m.ClientWaitUs)
	_, split := m.Value(plan.MetricClientSendRecv)
	switch {
	case m.IsAbsent("client_wait_us") && !m.IsAbsent("client_send_recv_us") && sr > 0:
		fmt.Fprintf(w, "    Client send/recv: %.0f usec; response wait %s\n", sr, notCarried)
	case !split:
		// No split measured (an import without one): no line of zeros.
	case inProc:
		fmt.Fprintf(w, "    Avg C API time: %.0f usec (request build %.0f usec + wait for the final response %.0f usec)\n", sr+wait, sr, wait)
	case p.Protocol == plan.ProtocolGRPC:
		fmt.Fprintf(w, "    Avg gRPC time: %.0f usec ((un)marshal request/response %.0f usec + response wait %.0f usec)\n", sr+wait, sr, wait)
	default:
		fmt.Fprintf(w, "    Avg HTTP time: %.0f usec (send/recv %.0f usec + response wait %.0f usec)\n", sr+wait, sr, wait)
	}
	if m.Errors > 0 || p.Errors.Count > 0 {
		// The kept trials' count is the one the error budget judges; the
		// count over every window (stabilization included) is labelled apart.
		all := ""
		if p.Errors.Count != m.Errors || len(p.Windows) > 0 {
			all = fmt.Sprintf("; %d in all windows, stabilization included", p.Errors.Count)
		}
		fmt.Fprintf(w, "    Errors: %d in the kept trials (%s of their requests)%s%s\n",
			m.Errors, quantity(m.ErrorRate, "fraction"), all, dominantText(p.Errors))
		for _, e := range p.Errors.First {
			fmt.Fprintf(w, "      %s\n", e)
		}
	}
	if m.Server != nil {
		serverBlock(w, m)
	}
	if line := ProcessText(m.Process); line != "" {
		fmt.Fprintf(w, "  Server process: %s\n", line)
	}
	llmBlock(w, p)
	workloadBlock(w, p)
	if p.Validation.Enabled {
		fmt.Fprintf(w, "  Validation: %d checked, %d mismatched\n", p.Validation.Checked, p.Validation.Mismatches)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  Note: %s\n", n)
	}
}

func serverBlock(w io.Writer, m *result.Metrics) {
	s := m.Server
	fmt.Fprintf(w, "  Server: \n")
	if s.Reset {
		fmt.Fprintf(w, "    Statistics reset during the measurement (server restarted); not shown\n")
		return
	}
	if s.RequestCount > 0 && s.InferenceCount == 0 && s.ExecutionCount == 0 && s.QueueUs == 0 &&
		s.ComputeInputUs == 0 && s.ComputeInferUs == 0 && s.ComputeOutputUs == 0 {
		// A server that counts requests and their time only (TF Serving's
		// Prometheus figures): zeros here would read as measured.
		fmt.Fprintf(w, "    Successful request count: %d\n", s.RequestCount)
		fmt.Fprintf(w, "    Avg request latency: %.0f usec (the server reports no queue or compute breakdown)\n", truncUs(s.AvgRequestUs))
		return
	}
	count := func(key string, n int64) string {
		return carried(m, result.ServerAbsent+key, strconv.FormatInt(n, 10))
	}
	fmt.Fprintf(w, "    Inference count: %s\n", count("inference_count", s.InferenceCount))
	fmt.Fprintf(w, "    Execution count: %s\n", count("execution_count", s.ExecutionCount))
	fmt.Fprintf(w, "    Successful request count: %s\n", count("request_count", s.RequestCount))
	req, q := truncUs(s.AvgRequestUs), truncUs(s.QueueUs)
	in, inf, out := truncUs(s.ComputeInputUs), truncUs(s.ComputeInferUs), truncUs(s.ComputeOutputUs)
	if m.IsAbsent(result.ServerAbsent + "avg_request_us") {
		// No total to take the overhead from: the parts the file has.
		fmt.Fprintf(w, "    Avg request latency: %s (queue %.0f usec + compute input %.0f usec + compute infer %.0f usec + compute output %.0f usec)\n",
			notCarried, q, in, inf, out)
		return
	}
	// perf_analyzer floors each average before taking the overhead.
	overhead := req - q - (in + inf + out)
	if overhead < 0 {
		overhead = 0
	}
	fmt.Fprintf(w, "    Avg request latency: %.0f usec (overhead %.0f usec + queue %.0f usec + compute input %.0f usec + compute infer %.0f usec + compute output %.0f usec)\n",
		req, overhead, q, in, inf, out)
}

func pointRows(run *result.Run) [][]string {
	rows := make([][]string, len(run.Points))
	for i := range run.Points {
		rows[i] = pointCells(&run.Points[i])
	}
	return rows
}

// table renders rows with tablewriter; cells are never wrapped or
// re-cased so the output stays greppable.
func table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(toAny(header)...)
	for _, r := range rows {
		if err := t.Append(toAny(r)...); err != nil {
			return fmt.Errorf("rendering table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("rendering table: %w", err)
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// dominantText quotes the most frequent class of failure when there are
// several: "; mostly connection refused (443920 of 443982)".
func dominantText(e result.ErrorInfo) string {
	d, ok := e.Dominant()
	if !ok || len(e.Classes) == 1 && d.Count == e.Count {
		if ok {
			return "; all " + d.Class
		}
		return ""
	}
	return fmt.Sprintf("; mostly %s (%d of %d)", d.Class, d.Count, e.Count)
}

// summaryQuotes is the index of the check whose message the summary line
// quotes (the first failure of a run that could not measure), -1 if none:
// the console prints that message once, in the summary.
func summaryQuotes(v *verdict.Verdict) int {
	if v.Outcome() != verdict.OutcomeNotMeasured {
		return -1
	}
	for i, c := range v.Checks {
		if c.Status == verdict.StatusFail {
			return i
		}
	}
	return -1
}

// notCarried stands for a figure the source file did not carry.
const notCarried = "absent (not in the source file)"

// carried is text, or notCarried for a figure m marks absent.
func carried(m *result.Metrics, key, text string) string {
	if m.IsAbsent(key) {
		return notCarried
	}
	return text
}

// checkSays reports whether a check of v has text in its message.
func checkSays(v *verdict.Verdict, text string) bool {
	if v == nil {
		return false
	}
	for _, c := range v.Checks {
		if strings.Contains(c.Message, text) {
			return true
		}
	}
	return false
}
