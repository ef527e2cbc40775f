package pacompat

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// CSV is perf_analyzer's -f file (report_writer.cc GenerateReport) for the
// reported levels: its header, its columns in its order, integer
// microseconds, rows sorted by throughput.
//
// perfscen measures a request's client time as one send/receive figure:
// it is written under Client Send, and Client Recv is 0, as perf_analyzer
// itself writes for HTTP. GPU cells carry one "gpu" entry for the server's
// GPUs together.
func CSV(p *Params, pts []*result.Point) []byte {
	var b bytes.Buffer
	rate := !p.TargetsConcurrency()
	decoupled, server := false, false
	for _, pt := range pts {
		decoupled = decoupled || pt.Summary.Responses > 0
		server = server || (pt.Summary.Server != nil && !pt.Summary.Server.Reset && p.serverStats())
	}
	metrics := p.Metrics && p.VerboseCSV
	cols := []string{"Concurrency"}
	if rate {
		cols[0] = "Request Rate"
	}
	cols = append(cols, "Inferences/Second")
	if decoupled {
		cols = append(cols, "Response Throughput")
	}
	cols = append(cols, "Client Send")
	if server {
		cols = append(cols, "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output")
	}
	cols = append(cols, "Client Recv")
	for _, q := range Percentiles(p) {
		cols = append(cols, fmt.Sprintf("p%d latency", q))
	}
	if p.VerboseCSV {
		if p.Percentile == -1 {
			cols = append(cols, "Avg latency")
		}
		cols = append(cols, "request/response", "response wait")
		if metrics {
			cols = append(cols, "Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory")
		}
	}
	b.WriteString(strings.Join(cols, ",") + "\n")

	rows := append([]*result.Point(nil), pts...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Summary.Throughput < rows[j].Summary.Throughput })
	for _, pt := range rows {
		m := &pt.Summary
		var cells []string
		if rate {
			cells = append(cells, num(pt.RequestRate))
		} else {
			cells = append(cells, strconv.Itoa(pt.Concurrency))
		}
		cells = append(cells, num(m.Throughput))
		if decoupled {
			cells = append(cells, num(m.ResponseThroughput))
		}
		cells = append(cells, u(m.ClientSendRecvUs))
		if server {
			var s result.ServerStats
			if m.Server != nil && !m.Server.Reset {
				s = *m.Server
			}
			// The client's wait less what the server accounts for,
			// floored at zero as perf_analyzer does.
			wait := us(m.LatencyAvgUs - m.ClientSendRecvUs)
			accounted := us(s.QueueUs) + us(s.ComputeInputUs) + us(s.ComputeInferUs) + us(s.ComputeOutputUs)
			network := uint64(0)
			if wait > accounted {
				network = wait - accounted
			}
			cells = append(cells, strconv.FormatUint(network, 10), u(s.QueueUs), u(s.ComputeInputUs), u(s.ComputeInferUs), u(s.ComputeOutputUs))
		}
		cells = append(cells, "0")
		for _, q := range Percentiles(p) {
			cells = append(cells, u(PercentileUs(pt, q)))
		}
		if p.VerboseCSV {
			if p.Percentile == -1 {
				cells = append(cells, u(m.LatencyAvgUs))
			}
			cells = append(cells, u(m.ClientSendRecvUs), u(m.ClientWaitUs))
			if metrics {
				var g result.GPUMetrics
				if m.GPU != nil {
					g = *m.GPU
				}
				for _, v := range []float64{g.UtilizationAvg, g.PowerAvgWatts, g.MemoryUsedMax, g.MemoryTotalMax} {
					if m.GPU == nil {
						cells = append(cells, "")
					} else {
						cells = append(cells, "gpu:"+num(v)+";")
					}
				}
			}
		}
		b.WriteString(strings.Join(cells, ",") + "\n")
	}
	return b.Bytes()
}

func u(v float64) string { return strconv.FormatUint(us(v), 10) }

// Reported says whether perf_analyzer would report pt: measured to
// stability and, under -l, with its stabilizing latency under the limit.
func Reported(p *Params, pt *result.Point) bool {
	if pt.Status != result.PointStable {
		return false
	}
	if p.LatencyThresholdMs > 0 && StabilizingUs(p, pt) >= float64(p.LatencyThresholdMs)*1000 {
		return false
	}
	return pt.Mode != plan.LoadIterations || pt.Summary.Requests > 0
}
