package importer

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Log sections inside one load-level block.
const (
	secNone = iota
	secClient
	secServer
	secComposing // an ensemble's composing models: not the top-level figures
)

// logParser walks a perf_analyzer console log line by line. A log may hold
// several runs, each introduced by its echoed command line.
type logParser struct {
	name string
	opts Options

	model, shm string
	protocol   plan.Protocol
	batch      int
	kind       string // perf_analyzer's service kind
	method     string // --grpc-method of a dynamic gRPC run

	points  []result.Point
	cur     *result.Point
	curLine int
	section int
	hasData bool
	seen    map[string]bool // the figures the current block carried, by JSON key
	failed  string
	blocks  int
}

// ParseLog reads perf_analyzer's console output: "Request concurrency: N"
// or "Request Rate: R" blocks with Client and Server sections. The model
// comes from an echoed "perf_analyzer -m NAME …" line, else opts.Model.
func ParseLog(name string, r io.Reader, opts Options) ([]result.Point, error) {
	lp := &logParser{name: name, opts: opts}
	lp.resetRun()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		if err := lp.line(n, sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	lp.finish()
	if n == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	if lp.blocks == 0 {
		return nil, fmt.Errorf("%s: no perf_analyzer results found (no \"Request concurrency:\" or \"Request Rate:\" block)", name)
	}
	return lp.points, nil
}

// resetRun applies the defaults a new perf_analyzer invocation starts from.
func (lp *logParser) resetRun() {
	lp.model = lp.opts.Model
	lp.protocol = lp.opts.Protocol
	lp.batch = lp.opts.BatchSize
	lp.shm = ""
	lp.kind = lp.opts.ServiceKind
	lp.method = ""
}

func (lp *logParser) line(n int, raw string) error {
	s := strings.TrimSpace(raw)
	col := strings.Index(raw, s) + 1
	if args, ok := commandLine(s); ok {
		lp.finish()
		lp.resetRun()
		return lp.command(n, args)
	}
	if v, ok := strings.CutPrefix(s, "Request concurrency:"); ok {
		c, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || c < 0 {
			return fmt.Errorf("%s:%d:%d: Request concurrency: %q is not a non-negative integer", lp.name, n, col, strings.TrimSpace(v))
		}
		return lp.start(n, level{concurrency: c})
	}
	if v, ok := strings.CutPrefix(s, "Request Rate:"); ok && !strings.Contains(v, ", throughput:") {
		// (the closing summary's "Request Rate: R, throughput: …" lines are skipped)
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "inference requests per seconds"))
		r, err := parseNumber(v)
		if err != nil {
			return fmt.Errorf("%s:%d:%d: Request Rate: %w", lp.name, n, col, err)
		}
		return lp.start(n, level{rate: true, requestRate: r})
	}
	if v, ok := strings.CutPrefix(s, "Service Kind:"); ok && lp.cur == nil {
		k, err := ParseServiceKind(v)
		if err != nil {
			return fmt.Errorf("%s:%d:%d: %w", lp.name, n, col, err)
		}
		lp.kind = k
		return nil
	}
	if v, ok := strings.CutPrefix(s, "Batch size:"); ok && lp.cur == nil {
		b, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || b <= 0 {
			return fmt.Errorf("%s:%d:%d: Batch size: %q is not a positive integer", lp.name, n, col, strings.TrimSpace(v))
		}
		lp.batch = b
		return nil
	}
	if lp.cur == nil {
		return nil
	}
	switch {
	case strings.HasPrefix(s, "Inferences/Second vs."):
		lp.finish()
		return nil
	case strings.HasPrefix(s, "Failed to obtain stable measurement"):
		lp.failed = s
		return nil
	case s == "Client:":
		lp.section = secClient
		return nil
	case s == "Server:":
		lp.section = secServer
		return nil
	case s == "Composing models:":
		lp.section = secComposing
		return nil
	}
	key, val, ok := strings.Cut(s, ":")
	if !ok {
		return nil
	}
	vcol := col + len(key) + 1 + (len(val) - len(strings.TrimLeft(val, " ")))
	val = strings.TrimSpace(val)
	switch lp.section {
	case secClient:
		return lp.client(n, vcol, key, val)
	case secServer:
		return lp.server(n, vcol, key, val)
	}
	return nil
}

func (lp *logParser) start(n int, lv level) error {
	lp.finish()
	model := lp.model
	if model == "" && lp.method != "" {
		model = methodModel(lp.method)
	}
	if model == "" {
		return fmt.Errorf("%s:%d: the log does not show the perf_analyzer command line (-m NAME) before this result; pass --model", lp.name, n)
	}
	proto := lp.protocol
	if proto == "" {
		proto = impliedProtocol(lp.kind)
	}
	p := newPoint(model, lv, lp.batch, proto, lp.shm)
	lp.cur = &p
	lp.curLine = n
	lp.section = secNone
	lp.hasData = false
	lp.seen = map[string]bool{}
	lp.failed = ""
	lp.blocks++
	return nil
}

// finish closes the current block. A block without client figures is a
// level perf_analyzer could not measure; it is kept so the gap shows.
func (lp *logParser) finish() {
	if lp.cur == nil {
		return
	}
	p := *lp.cur
	lp.cur = nil
	applyServiceKind(&p, lp.kind)
	// Merged with what the service kind left out (a dynamic gRPC split).
	p.Summary.Absent = slices.Compact(slices.Sorted(slices.Values(append(p.Summary.Absent, lp.absent(p.Summary.Server != nil)...))))
	if len(p.Summary.Absent) > 0 && lp.hasData {
		p.Notes = append(p.Notes, "not in the log, so absent (not 0): "+strings.Join(p.Summary.Absent, ", "))
	}
	if !lp.hasData {
		p.Status = result.PointUnstable
		msg := lp.failed
		if msg == "" {
			msg = "no client figures"
		}
		p.Notes = append(p.Notes, fmt.Sprintf("%s:%d: perf_analyzer reported no result for this level: %s", lp.name, lp.curLine, msg))
	}
	lp.points = append(lp.points, p)
}

// logFigures are the figures a perf_analyzer console log may carry, by
// their result JSON keys. It never prints the latency's minimum or
// maximum, nor an error count (perf_analyzer stops on errors instead);
// those, and any line a block lacks, are absent, never 0.
var logFigures = []string{
	"client_send_recv_us", "client_wait_us", "error_rate", "errors",
	"latency_avg_us", "latency_max_us", "latency_min_us", "latency_std_us",
	"p50_us", "p90_us", "p95_us", "p99_us", "requests",
}

// logServerFigures are the server block's figures a log may carry.
var logServerFigures = []string{"avg_request_us", "execution_count", "inference_count", "request_count"}

// absent lists, sorted, the figures the current block did not carry.
func (lp *logParser) absent(hasServer bool) []string {
	var out []string
	for _, k := range logFigures {
		if !lp.seen[k] {
			out = append(out, k)
		}
	}
	if hasServer {
		for _, k := range logServerFigures {
			if !lp.seen[result.ServerAbsent+k] {
				out = append(out, result.ServerAbsent+k)
			}
		}
	}
	return out
}

func (lp *logParser) client(n, col int, key, val string) error {
	m := &lp.cur.Summary
	switch {
	case key == "Request count":
		v, err := lp.integer(n, col, key, val)
		m.Requests = v
		lp.seen["requests"] = true
		return err
	case key == "Delayed Request Count":
		v, err := lp.integer(n, col, key, val)
		lp.cur.LateSends = v
		return err
	case key == "Throughput":
		v, err := lp.number(n, col, key, strings.TrimSuffix(val, " infer/sec"))
		m.Throughput = v
		lp.hasData = true
		return err
	case key == "Avg latency":
		avg, rest := splitParen(val)
		v, err := lp.usec(n, col, key, avg)
		if err != nil {
			return err
		}
		m.LatencyAvgUs = v
		lp.seen["latency_avg_us"] = true
		if sd, ok := strings.CutPrefix(rest, "standard deviation "); ok {
			m.LatencyStdUs, err = lp.usec(n, col, key, sd)
			lp.seen["latency_std_us"] = true
		}
		return err
	case isPercentileColumn(key):
		v, err := lp.usec(n, col, key, val)
		switch key {
		case "p50 latency":
			m.P50Us = v
		case "p90 latency":
			m.P90Us = v
		case "p95 latency":
			m.P95Us = v
		case "p99 latency":
			m.P99Us = v
		}
		lp.seen[strings.TrimSuffix(key, " latency")+"_us"] = true
		return err
	case key == "Avg HTTP time" || key == "Avg gRPC time":
		lp.cur.Protocol = plan.ProtocolHTTP
		if key == "Avg gRPC time" {
			lp.cur.Protocol = plan.ProtocolGRPC
		}
		lp.cur.Coords["protocol"] = string(lp.cur.Protocol)
		return lp.clientSplit(n, col, key, val)
	}
	return nil
}

// clientSplit reads "T usec (send/recv A usec + response wait B usec)" and
// its verbose and gRPC variants.
func (lp *logParser) clientSplit(n, col int, key, val string) error {
	total, parts := splitParen(val)
	if _, err := lp.usec(n, col, key, total); err != nil {
		return err
	}
	terms, err := lp.terms(n, col, key, parts)
	if err != nil {
		return err
	}
	m := &lp.cur.Summary
	m.ClientSendRecvUs, m.ClientWaitUs = 0, 0
	for label, v := range terms {
		switch label {
		case "response wait":
			m.ClientWaitUs = v
			lp.seen["client_wait_us"] = true
		case "send/recv", "(un)marshal request/response", "send", "receive", "marshal", "unmarshal":
			m.ClientSendRecvUs += v
			lp.seen["client_send_recv_us"] = true
		}
	}
	return nil
}

func (lp *logParser) server(n, col int, key, val string) error {
	s := server(lp.cur)
	var err error
	switch key {
	case "Inference count":
		s.InferenceCount, err = lp.integer(n, col, key, val)
		lp.seen[result.ServerAbsent+"inference_count"] = true
	case "Execution count":
		s.ExecutionCount, err = lp.integer(n, col, key, val)
		lp.seen[result.ServerAbsent+"execution_count"] = true
	case "Successful request count", "Request count":
		s.RequestCount, err = lp.integer(n, col, key, val)
		lp.seen[result.ServerAbsent+"request_count"] = true
	case "Avg request latency":
		avg, parts := splitParen(val)
		if s.AvgRequestUs, err = lp.usec(n, col, key, avg); err != nil {
			return err
		}
		lp.seen[result.ServerAbsent+"avg_request_us"] = true
		terms, err := lp.terms(n, col, key, parts)
		if err != nil {
			return err
		}
		s.QueueUs = terms["queue"]
		s.ComputeInputUs = terms["compute input"]
		s.ComputeInferUs = terms["compute infer"]
		s.ComputeOutputUs = terms["compute output"]
		if _, old := terms["compute"]; old {
			lp.cur.Notes = append(lp.cur.Notes, "server compute time is not split into input/infer/output in this log")
		}
	}
	return err
}

// terms parses "a N usec + b M usec" into label → N.
func (lp *logParser) terms(n, col int, key, s string) (map[string]float64, error) {
	out := map[string]float64{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, " + ") {
		part = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(part), "usec"))
		i := strings.LastIndexByte(part, ' ')
		if i < 0 {
			return nil, fmt.Errorf("%s:%d:%d: %s: %q is not \"label N usec\"", lp.name, n, col, key, part)
		}
		v, err := parseNumber(part[i+1:])
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: %s: %w", lp.name, n, col, key, err)
		}
		out[strings.TrimSpace(part[:i])] = v
	}
	return out, nil
}

func (lp *logParser) number(n, col int, key, s string) (float64, error) {
	v, err := parseNumber(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s:%d:%d: %s: %w", lp.name, n, col, key, err)
	}
	return v, nil
}

func (lp *logParser) usec(n, col int, key, s string) (float64, error) {
	return lp.number(n, col, key, strings.TrimSuffix(strings.TrimSpace(s), "usec"))
}

func (lp *logParser) integer(n, col int, key, s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s:%d:%d: %s: %q is not a non-negative integer", lp.name, n, col, key, strings.TrimSpace(s))
	}
	return v, nil
}

// splitParen splits "X (inside)" into "X" and "inside"; the inside may
// itself hold parentheses ("((un)marshal … )").
func splitParen(s string) (head, inside string) {
	i := strings.IndexByte(s, '(')
	if i < 0 || !strings.HasSuffix(s, ")") {
		return strings.TrimSpace(s), ""
	}
	return strings.TrimSpace(s[:i]), s[i+1 : len(s)-1]
}
