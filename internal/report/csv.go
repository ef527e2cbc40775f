package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// CSV writes perf_analyzer's -f layout (report_writer.cc GenerateReport):
// same header, column order, integer-microsecond cells and rows sorted by
// ascending throughput; opts.VerboseCSV adds the --verbose-csv columns.
//
// Two figures perf_analyzer splits are one number in perfscen: the client
// send and receive times are written together under "Client Send" (and
// "Client Recv" is 0), and the GPU cells carry one "gpu" key for the
// server's combined figure instead of one per GPU UUID.
//
// Every measured point is written, an unstable one a scenario allowed
// included, with its status in a last "Status" column (perf_analyzer
// writes only stable levels, so it has none; readers that match columns
// by name, perfscen import among them, take it or leave it). A run that
// measured nothing gets the header alone: the verdict already said why,
// and the file must not contradict it by failing.
func CSV(w io.Writer, run *result.Run, _ *verdict.Verdict, opts Options) error {
	points, err := csvPoints(run, opts.Model)
	if err != nil {
		return err
	}
	if len(points) == 0 {
		rate := len(run.Points) > 0 && run.Points[0].Mode == plan.LoadRequestRate
		_, err := io.WriteString(w, csvHeader(rate, false, opts.VerboseCSV, false))
		return err
	}
	rate := points[0].Mode == plan.LoadRequestRate
	for _, p := range points[1:] {
		if (p.Mode == plan.LoadRequestRate) != rate {
			return fmt.Errorf("csv: model %s mixes concurrency and request-rate points; perf_analyzer's layout holds one load mode", p.Model)
		}
	}
	// The cells are the points' figures (result.Point.FigureMetrics), the
	// numbers the console and the checks show.
	figs := make(map[*result.Point]result.Metrics, len(points))
	var withServer, withGPU, withLLM, withProcess bool
	for _, p := range points {
		f := p.FigureMetrics()
		figs[p] = f
		withServer = withServer || (f.Server != nil && !f.Server.Reset)
		withGPU = withGPU || f.GPU != nil
		withLLM = withLLM || f.LLM != nil
		withProcess = withProcess || (f.Process != nil && f.Process.Inferences > 0)
	}
	bw := bufio.NewWriter(w)
	header := csvHeader(rate, withServer, opts.VerboseCSV, withGPU)
	if withLLM {
		header = llmCSVHeader(header)
	}
	if withProcess {
		header = processCSVHeader(header)
	}
	bw.WriteString(header)
	sort.SliceStable(points, func(i, j int) bool { return figs[points[i]].Throughput < figs[points[j]].Throughput })
	for _, p := range points {
		f := figs[p]
		row := csvRow(p, &f, rate, withServer, opts.VerboseCSV, withGPU)
		if withLLM {
			row = llmCSVRow(row, f.LLM)
		}
		if withProcess {
			row = processCSVRow(row, f.Process)
		}
		bw.WriteString(strings.TrimSuffix(row, "\n") + "," + p.Status + "\n")
	}
	return bw.Flush()
}

func csvPoints(run *result.Run, model string) ([]*result.Point, error) {
	var points []*result.Point
	models := map[string]bool{}
	for i := range run.Points {
		p := &run.Points[i]
		models[p.Model] = true
		// A search's probes are not a sweep: perfscen pa writes its own
		// CSV of the levels under -l.
		if csvMeasured(p) && p.Search == "" && (model == "" || p.Model == model) {
			points = append(points, p)
		}
	}
	if model == "" && len(models) > 1 {
		names := make([]string, 0, len(models))
		for m := range models {
			names = append(names, m)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("csv: perf_analyzer's layout holds one model and this run has %d (%s); choose one", len(names), strings.Join(names, ", "))
	}
	return points, nil
}

// csvMeasured: a point with figures of its own, stable or not. A point
// that kept no trial and counted nothing has no row to give.
func csvMeasured(p *result.Point) bool {
	if p.Status == result.PointStable || p.Status == result.PointImported {
		return true
	}
	m := p.FigureMetrics()
	if p.Uncounted() {
		return m.Throughput > 0
	}
	return len(p.Trials) > 0 && (m.Requests > 0 || m.Throughput > 0)
}

func csvHeader(rate, server, verbose, gpu bool) string {
	cols := []string{"Concurrency"}
	if rate {
		cols[0] = "Request Rate"
	}
	cols = append(cols, "Inferences/Second", "Client Send")
	if server {
		cols = append(cols, "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output")
	}
	cols = append(cols, "Client Recv", "p50 latency", "p90 latency", "p95 latency", "p99 latency")
	if verbose {
		cols = append(cols, "Avg latency", "request/response", "response wait")
		if gpu {
			cols = append(cols, "Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory")
		}
	}
	return strings.Join(append(cols, "Status"), ",") + "\n"
}

func csvRow(p *result.Point, m *result.Metrics, rate, server, verbose, gpu bool) string {
	var cells []string
	if rate {
		cells = append(cells, paFloat(p.RequestRate))
	} else {
		cells = append(cells, fmt.Sprint(p.Concurrency))
	}
	cells = append(cells, paFloat(m.Throughput), usec(m.ClientSendRecvUs))
	if server {
		var s result.ServerStats
		if m.Server != nil && !m.Server.Reset {
			s = *m.Server
		}
		// Network+Server Send/Recv: the client's wait not accounted for by
		// the server, floored at zero as perf_analyzer does.
		wait := truncUs(m.LatencyAvgUs - m.ClientSendRecvUs)
		accounted := truncUs(s.QueueUs) + truncUs(s.ComputeInputUs) + truncUs(s.ComputeInferUs) + truncUs(s.ComputeOutputUs)
		network := wait - accounted
		if network < 0 {
			network = 0
		}
		cells = append(cells, usec(network), usec(s.QueueUs), usec(s.ComputeInputUs), usec(s.ComputeInferUs), usec(s.ComputeOutputUs))
	}
	cells = append(cells, "0", usec(m.P50Us), usec(m.P90Us), usec(m.P95Us), usec(m.P99Us))
	if verbose {
		cells = append(cells, usec(m.LatencyAvgUs), usec(m.ClientSendRecvUs), usec(m.ClientWaitUs))
		if gpu {
			var g result.GPUMetrics
			if m.GPU != nil {
				g = *m.GPU
			}
			for _, v := range []float64{g.UtilizationAvg, g.PowerAvgWatts, g.MemoryUsedMax, g.MemoryTotalMax} {
				cells = append(cells, "gpu:"+paFloat(v)+";")
			}
		}
	}
	return strings.Join(cells, ",") + "\n"
}

// llmCSVHeader puts the LLM columns before the last (Status) column of a
// header line.
func llmCSVHeader(line string) string {
	cols := make([]string, len(llmCSVColumns))
	for i, c := range llmCSVColumns {
		cols[i] = c.name
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), ",Status")
	return line + "," + strings.Join(cols, ",") + ",Status\n"
}

// llmCSVRow appends a point's LLM cells to its row; a point without LLM
// figures gets empty cells.
func llmCSVRow(line string, l *result.LLMMetrics) string {
	cells := make([]string, len(llmCSVColumns))
	if l != nil {
		for i, c := range llmCSVColumns {
			cells[i] = c.cell(l)
		}
	}
	return strings.TrimSuffix(line, "\n") + "," + strings.Join(cells, ",") + "\n"
}
