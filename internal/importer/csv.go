package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// perf_analyzer's -f column names (report_writer.cc GenerateReport).
const (
	colConcurrency   = "Concurrency"
	colRequestRate   = "Request Rate"
	colThroughput    = "Inferences/Second"
	colRespThrough   = "Response Throughput"
	colClientSend    = "Client Send"
	colNetwork       = "Network+Server Send/Recv"
	colQueue         = "Server Queue"
	colComputeInput  = "Server Compute Input"
	colComputeInfer  = "Server Compute Infer"
	colComputeOutput = "Server Compute Output"
	colCacheHit      = "Server Cache Hit"
	colCacheMiss     = "Server Cache Miss"
	colClientRecv    = "Client Recv"
	colAvgLatency    = "Avg latency"
	colReqResp       = "request/response"
	colRespWait      = "response wait"
	colGPUUtil       = "Avg GPU Utilization"
	colGPUPower      = "Avg GPU Power Usage"
	colGPUMemUsed    = "Max GPU Memory Usage"
	colGPUMemTotal   = "Total GPU Memory"
	// colStatus is perfscen's own last column: the point's status
	// (perf_analyzer writes stable levels only, and no such column).
	colStatus = "Status"
)

// csvNoRequestCount explains why an imported CSV point has no request
// count: the CSV does not carry one, and perfscen does not invent it.
const csvNoRequestCount = "imported from a perf_analyzer CSV, which has no request count"

// csvCarries maps the figures a perf_analyzer CSV may carry (by their
// result JSON keys) to the column that does; a figure whose column the
// file lacks, or that no column carries (request and error counts, the
// latency spread), is absent from the imported point, never 0.
var csvCarries = map[string][]string{
	"requests": nil, "errors": nil, "error_rate": nil,
	"latency_std_us": nil, "latency_min_us": nil, "latency_max_us": nil,
	"latency_avg_us": {colAvgLatency},
	"client_wait_us": {colRespWait},
	"p50_us":         {"p50 latency"}, "p90_us": {"p90 latency"}, "p95_us": {"p95 latency"}, "p99_us": {"p99 latency"},
	"client_send_recv_us": {colClientSend, colClientRecv},
}

// csvAbsent lists, sorted, the figures the columns in header do not
// carry.
func csvAbsent(header []string) []string {
	have := map[string]bool{}
	for _, h := range header {
		have[h] = true
	}
	var out []string
	for key, cols := range csvCarries {
		found := false
		for _, c := range cols {
			found = found || have[c]
		}
		if !found {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// csvSetter stores one numeric cell into a point.
type csvSetter func(p *result.Point, v float64)

func server(p *result.Point) *result.ServerStats {
	if p.Summary.Server == nil {
		p.Summary.Server = &result.ServerStats{}
	}
	return p.Summary.Server
}

func gpu(p *result.Point) *result.GPUMetrics {
	if p.Summary.GPU == nil {
		p.Summary.GPU = &result.GPUMetrics{}
	}
	return p.Summary.GPU
}

// numericColumns maps each known numeric column to where it lands; a nil
// setter marks a column perfscen reads but has no field for.
var numericColumns = map[string]csvSetter{
	colThroughput:    func(p *result.Point, v float64) { p.Summary.Throughput = v },
	colRespThrough:   func(p *result.Point, v float64) { p.Summary.ResponseThroughput = v },
	colClientSend:    func(p *result.Point, v float64) { p.Summary.ClientSendRecvUs += v },
	colNetwork:       func(p *result.Point, v float64) { server(p) },
	colQueue:         func(p *result.Point, v float64) { server(p).QueueUs = v },
	colComputeInput:  func(p *result.Point, v float64) { server(p).ComputeInputUs = v },
	colComputeInfer:  func(p *result.Point, v float64) { server(p).ComputeInferUs = v },
	colComputeOutput: func(p *result.Point, v float64) { server(p).ComputeOutputUs = v },
	colCacheHit:      nil,
	colCacheMiss:     nil,
	colClientRecv:    func(p *result.Point, v float64) { p.Summary.ClientSendRecvUs += v },
	colAvgLatency:    func(p *result.Point, v float64) { p.Summary.LatencyAvgUs = v },
	colReqResp:       nil, // equals Client Send + Client Recv, already summed
	colRespWait:      func(p *result.Point, v float64) { p.Summary.ClientWaitUs = v },
	"p50 latency":    func(p *result.Point, v float64) { p.Summary.P50Us = v },
	"p90 latency":    func(p *result.Point, v float64) { p.Summary.P90Us = v },
	"p95 latency":    func(p *result.Point, v float64) { p.Summary.P95Us = v },
	"p99 latency":    func(p *result.Point, v float64) { p.Summary.P99Us = v },
}

// llmColumns are the columns perfscen's own CSV adds for openai-kind runs
// (report.llmCSVColumns): token rates, goodput, TTFT, ITL and TPOT in
// integer microseconds, token totals and where the counts came from. An
// empty cell is a figure the point did not have (no streamed request, no
// goodput SLO) and stays absent.
var llmColumns = func() map[string]csvCellSetter {
	cols := map[string]csvCellSetter{
		"Output Tokens/Second": llmNumber(func(l *result.LLMMetrics, v float64) { l.OutputTokensPerSec = v }),
		"Goodput":              llmNumber(func(l *result.LLMMetrics, v float64) { l.Goodput = &v }),
		"Output Tokens":        llmCount(func(l *result.LLMMetrics, n int64) { l.OutputTokens = n }),
		"Input Tokens":         llmCount(func(l *result.LLMMetrics, n int64) { l.InputTokens = n }),
		"Token Count Source":   tokenSource,
	}
	dists := map[string]func(l *result.LLMMetrics) *result.Distribution{
		"TTFT": func(l *result.LLMMetrics) *result.Distribution { return &l.TTFT },
		"ITL":  func(l *result.LLMMetrics) *result.Distribution { return &l.ITL },
		"TPOT": func(l *result.LLMMetrics) *result.Distribution { return &l.TPOT },
	}
	for prefix, pick := range dists {
		for stat, field := range distFields {
			cols[prefix+" "+stat] = llmNumber(func(l *result.LLMMetrics, v float64) { *field(pick(l)) = v })
		}
	}
	return cols
}()

// llmCSVAbsent are the LLM figures perfscen's own CSV does not carry: it
// has each distribution's mean and percentiles but not its sample count
// or maximum, and token totals but not how many requests were streamed or
// counted from usage or from chunks.
var llmCSVAbsent = []string{
	result.LLMAbsent + "itl.count", result.LLMAbsent + "itl.max_us",
	result.LLMAbsent + "streamed",
	result.LLMAbsent + "tokens_from_chunks", result.LLMAbsent + "tokens_from_usage",
	result.LLMAbsent + "tpot.count", result.LLMAbsent + "tpot.max_us",
	result.LLMAbsent + "ttft.count", result.LLMAbsent + "ttft.max_us",
}

// hasLLMColumns reports whether header is perfscen's CSV of an openai-kind
// run.
func hasLLMColumns(header []string) bool {
	for _, h := range header {
		if llmColumns[h] != nil {
			return true
		}
	}
	return false
}

// distFields are a distribution's figures by the names both CSV layouts
// give them.
var distFields = map[string]func(d *result.Distribution) *float64{
	"avg": func(d *result.Distribution) *float64 { return &d.AvgUs },
	"p50": func(d *result.Distribution) *float64 { return &d.P50Us },
	"p90": func(d *result.Distribution) *float64 { return &d.P90Us },
	"p95": func(d *result.Distribution) *float64 { return &d.P95Us },
	"p99": func(d *result.Distribution) *float64 { return &d.P99Us },
}

// csvCellSetter stores one non-empty cell into a point.
type csvCellSetter func(p *result.Point, cell string) error

func llm(p *result.Point) *result.LLMMetrics {
	if p.Summary.LLM == nil {
		p.Summary.LLM = &result.LLMMetrics{}
	}
	return p.Summary.LLM
}

func llmNumber(set func(l *result.LLMMetrics, v float64)) csvCellSetter {
	return func(p *result.Point, cell string) error {
		v, err := parseNumber(cell)
		if err != nil {
			return err
		}
		set(llm(p), v)
		return nil
	}
}

func llmCount(set func(l *result.LLMMetrics, n int64)) csvCellSetter {
	return func(p *result.Point, cell string) error {
		n, err := strconv.ParseInt(cell, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", cell)
		}
		set(llm(p), n)
		return nil
	}
}

// tokenSource keeps where the file's token counts came from as a note:
// the per-request counts behind it are not in the CSV.
func tokenSource(p *result.Point, cell string) error {
	switch cell {
	case "usage", "chunks", "mixed":
		p.Notes = append(p.Notes, "output token counts came from "+map[string]string{
			"usage": "the server's usage", "chunks": "counted content chunks", "mixed": "the server's usage where present, else counted chunks",
		}[cell]+", as the file recorded")
		return nil
	}
	return fmt.Errorf("%q is not a token count source (usage, chunks or mixed)", cell)
}

// gpuSetter stores one per-GPU column ("uuid:value;uuid:value;").
type gpuSetter func(g *result.GPUMetrics, perGPU []float64)

// Several GPUs are folded into the server's figure: utilization is their
// mean, power and memory their totals.
var gpuColumns = map[string]gpuSetter{
	colGPUUtil:     func(g *result.GPUMetrics, v []float64) { g.UtilizationAvg = mean(v) },
	colGPUPower:    func(g *result.GPUMetrics, v []float64) { g.PowerAvgWatts = sum(v) },
	colGPUMemUsed:  func(g *result.GPUMetrics, v []float64) { g.MemoryUsedMax = sum(v) },
	colGPUMemTotal: func(g *result.GPUMetrics, v []float64) { g.MemoryTotalMax = sum(v) },
}

// ParseCSV reads perf_analyzer's -f CSV, with or without --verbose-csv.
// Columns are matched by name, so optional ones (server statistics,
// response cache, extra percentile, GPU metrics) may be present or not.
func ParseCSV(name string, r io.Reader, opts Options) ([]result.Point, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("%s: a perf_analyzer CSV does not name its model; pass --model", name)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, _, err := readRecord(cr, name)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if err != nil {
		return nil, err
	}
	header = trimTrailingEmpty(header)
	var notes []string
	if err := checkHeader(name, header, &notes); err != nil {
		return nil, err
	}
	var points []result.Point
	for {
		rec, row, err := readRecord(cr, name)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		p, err := parseRow(name, row, header, rec, opts)
		if err != nil {
			return nil, err
		}
		applyServiceKind(&p, opts.ServiceKind)
		p.Notes = append(p.Notes, csvNoRequestCount)
		if len(p.Summary.Absent) > 0 {
			p.Notes = append(p.Notes, "not in the file, so absent (not 0): "+strings.Join(p.Summary.Absent, ", "))
		}
		p.Notes = append(p.Notes, notes...)
		points = append(points, p)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("%s: perf_analyzer CSV has a header but no rows", name)
	}
	sort.SliceStable(points, func(i, j int) bool {
		if points[i].Mode == plan.LoadRequestRate {
			return points[i].RequestRate < points[j].RequestRate
		}
		return points[i].Concurrency < points[j].Concurrency
	})
	return points, nil
}

// readRecord reads the next record of file name and the line it starts
// on. It returns io.EOF as is at the end of the file; any other error
// names the file (encoding/csv's own errors give line and column).
func readRecord(cr *csv.Reader, name string) (rec []string, line int, err error) {
	rec, err = cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	line, _ = cr.FieldPos(0)
	return rec, line, nil
}

// trimTrailingEmpty drops the empty field a trailing comma leaves (the
// GPU columns end each row with ";," in perf_analyzer's own example).
func trimTrailingEmpty(rec []string) []string {
	if n := len(rec); n > 1 && strings.TrimSpace(rec[n-1]) == "" {
		return rec[:n-1]
	}
	return rec
}

func checkHeader(name string, header []string, notes *[]string) error {
	first := header[0]
	if first != colConcurrency && first != colRequestRate {
		return fmt.Errorf("%s:1:1: unknown perf_analyzer CSV header: first column is %q, want %q or %q", name, first, colConcurrency, colRequestRate)
	}
	seen := map[string]bool{}
	llmNoted := false
	for i, h := range header[1:] {
		col := i + 2
		if seen[h] {
			return fmt.Errorf("%s:1:%d: column %q appears twice", name, col, h)
		}
		seen[h] = true
		setter, numeric := numericColumns[h]
		_, isGPU := gpuColumns[h]
		switch {
		case h == colStatus:
		case llmColumns[h] != nil:
			if !llmNoted {
				llmNoted = true
				*notes = append(*notes, "LLM figures (TTFT, ITL, TPOT, tokens/s, goodput) as the file reported them; it has no per-request counts")
			}
		case numeric && setter == nil && h != colReqResp:
			*notes = append(*notes, fmt.Sprintf("perf_analyzer column %q has no perfscen field; kept as written in the point's columns", h))
		case numeric, isGPU:
		case isPercentileColumn(h):
			*notes = append(*notes, fmt.Sprintf("perf_analyzer column %q has no perfscen field; kept as written in the point's columns", h))
		default:
			return fmt.Errorf("%s:1:%d: unknown perf_analyzer CSV column %q", name, col, h)
		}
	}
	if !seen[colThroughput] {
		return fmt.Errorf("%s:1: perf_analyzer CSV header has no %q column", name, colThroughput)
	}
	return nil
}

// isPercentileColumn matches "pN latency" for the --percentile values
// perfscen has no field for (1..99).
func isPercentileColumn(h string) bool {
	n, ok := strings.CutPrefix(h, "p")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, " latency")
	if !ok {
		return false
	}
	v, err := strconv.Atoi(n)
	return err == nil && v >= 1 && v <= 99
}

func parseRow(name string, row int, header, rec []string, opts Options) (result.Point, error) {
	rec = trimTrailingEmpty(rec)
	if len(rec) != len(header) {
		return result.Point{}, fmt.Errorf("%s:%d: row has %d fields, header has %d", name, row, len(rec), len(header))
	}
	lv, err := parseLevel(name, row, header[0], rec[0])
	if err != nil {
		return result.Point{}, err
	}
	proto := opts.Protocol
	if proto == "" {
		proto = impliedProtocol(opts.ServiceKind)
	}
	p := newPoint(opts.Model, lv, opts.BatchSize, proto, "")
	p.Columns = make(map[string]string, len(rec))
	for i := range rec {
		p.Columns[header[i]] = strings.TrimSpace(rec[i])
	}
	p.Summary.Absent = csvAbsent(header)
	if hasLLMColumns(header) {
		p.Summary.Absent = append(p.Summary.Absent, llmCSVAbsent...)
		sort.Strings(p.Summary.Absent)
	}
	for i := 1; i < len(rec); i++ {
		h, cell := header[i], strings.TrimSpace(rec[i])
		if h == colStatus {
			switch cell {
			case "", result.PointStable, result.PointImported:
			case result.PointUnstable, result.PointFailed, result.PointPartial, result.PointAborted:
				// Kept: an unstable point imported as "imported" would be
				// taken for a measurement to trust (baseline update
				// --from recorded it without --force).
				p.Status = cell
				p.Notes = append(p.Notes, fmt.Sprintf("the file recorded this point as %s", cell))
			case result.PointSearched:
				p.Notes = append(p.Notes, fmt.Sprintf("the file recorded this point as %s", cell))
			default:
				return result.Point{}, fmt.Errorf("%s:%d:%d: column %q: %q is not a point status (stable, unstable, failed, partial, aborted, searched, imported)", name, row, i+1, h, cell)
			}
			continue
		}
		if set := llmColumns[h]; set != nil {
			if cell == "" {
				continue
			}
			if err := set(&p, cell); err != nil {
				return result.Point{}, fmt.Errorf("%s:%d:%d: column %q: %w", name, row, i+1, h, err)
			}
			continue
		}
		if set, ok := gpuColumns[h]; ok {
			vals, err := parseGPUCell(cell)
			if err != nil {
				return result.Point{}, fmt.Errorf("%s:%d:%d: column %q: %w", name, row, i+1, h, err)
			}
			if len(vals) > 0 {
				set(gpu(&p), vals)
			}
			continue
		}
		v, err := parseNumber(cell)
		if err != nil {
			return result.Point{}, fmt.Errorf("%s:%d:%d: column %q: %w", name, row, i+1, h, err)
		}
		if set := numericColumns[h]; set != nil {
			set(&p, v)
		}
	}
	if p.Summary.Server != nil {
		p.Summary.Absent = append(p.Summary.Absent, serverCountsAbsent...)
		sort.Strings(p.Summary.Absent)
	}
	return p, nil
}

// serverCountsAbsent are the server block's figures no perf_analyzer CSV
// carries: it has the server's queue and compute columns, but neither its
// counts nor its average request time ("Network+Server Send/Recv" is the
// client's latency less the server's parts, not the server's own time).
var serverCountsAbsent = []string{
	result.ServerAbsent + "avg_request_us", result.ServerAbsent + "execution_count",
	result.ServerAbsent + "inference_count", result.ServerAbsent + "request_count",
}

func parseLevel(name string, row int, col, cell string) (level, error) {
	cell = strings.TrimSpace(cell)
	if col == colConcurrency {
		n, err := strconv.Atoi(cell)
		if err != nil || n < 0 {
			return level{}, fmt.Errorf("%s:%d:1: column %q: %q is not a non-negative integer", name, row, col, cell)
		}
		return level{concurrency: n}, nil
	}
	v, err := parseNumber(cell)
	if err != nil {
		return level{}, fmt.Errorf("%s:%d:1: column %q: %w", name, row, col, err)
	}
	return level{rate: true, requestRate: v}, nil
}

// parseNumber accepts the non-negative finite numbers perf_analyzer prints.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	return v, nil
}

// parseGPUCell reads "uuid:value;uuid:value;" (trailing ';' optional).
func parseGPUCell(s string) ([]float64, error) {
	var vals []float64
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndexByte(part, ':')
		if i <= 0 {
			return nil, fmt.Errorf("%q is not a gpu_uuid:value pair", part)
		}
		v, err := parseNumber(part[i+1:])
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	return vals, nil
}

func mean(v []float64) float64 { return sum(v) / float64(len(v)) }

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}
