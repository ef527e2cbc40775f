package pacompat

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// ExportFile is perf_analyzer's profile export (--profile-export-file,
// profile_data_exporter.cc), the per-request records GenAI-Perf and AIPerf
// read their LLM figures from: one experiment per load level, in the order
// measured, every request of every window measured (not only the kept
// ones), and the windows' bounds.
type ExportFile struct {
	Experiments []ExportExperiment `json:"experiments"`
	// Version is the writer's: "perfscen pa <version>".
	Version     string `json:"version"`
	ServiceKind string `json:"service_kind"`
	Endpoint    string `json:"endpoint"`
}

// ExportExperiment is one load level's records.
type ExportExperiment struct {
	Experiment ExportLoad      `json:"experiment"`
	Requests   []ExportRequest `json:"requests"`
	// WindowBoundaries are each measured window's start and end, in
	// nanoseconds since the Unix epoch, two entries a window.
	WindowBoundaries []uint64 `json:"window_boundaries"`
}

// ExportLoad is the level: "concurrency" with the number of requests
// outstanding, or "request_rate" with the rate; a --request-intervals run
// is keyed request_rate 0, as perf_analyzer keys it.
type ExportLoad struct {
	Mode  string  `json:"mode"`
	Value float64 `json:"value"`
}

// ExportRequest is one request. Timestamps are nanoseconds since the Unix
// epoch: when it was sent, and when each response came.
type ExportRequest struct {
	Timestamp  uint64 `json:"timestamp"`
	SequenceID uint64 `json:"sequence_id,omitempty"`
	// RequestInputs maps each input to what was sent: a numeric tensor
	// as a flat array, a BYTES tensor as its string (an array of strings
	// for several elements), an OpenAI request as its body ("payload"),
	// a dynamic gRPC request as its serialised message in base64
	// ("message").
	RequestInputs      map[string]any   `json:"request_inputs"`
	ResponseTimestamps []uint64         `json:"response_timestamps"`
	ResponseOutputs    []map[string]any `json:"response_outputs"`
}

// Export gathers the records of a run as the engine hands them over and
// writes perf_analyzer's file when the run is over. A worker's part is to
// append the engine's record under a lock: what it sent is the input
// data's own Step, shared by every request that sent it, and is turned
// into perf_analyzer's JSON only when the file is written, once per
// step. So the export costs the measurement a few hundred nanoseconds a
// request whatever the tensors' size, and a long run holds at most
// spillBytes of records in memory: past that they are sorted and
// spilled to a temporary file (spill.go), merged back as the file is
// written. Requests, Window and Write may be called from several
// goroutines; Close removes the temporary file.
type Export struct {
	p          *Params
	version    string
	spillBytes int
	cacheBytes int

	mu       sync.Mutex
	order    []*exportExp
	by       map[string]*exportExp
	buf      []held
	bufBytes int
	spill    *spiller // nil until the first spill
}

// spillBytes and cacheBytes bound what the export holds in memory: the
// records not spilled yet (their own size, estimated), and the JSON of
// the steps sent (converted once each while the file is written).
const (
	defaultSpillBytes = 16 << 20
	defaultCacheBytes = 64 << 20
)

// exportExp is one experiment as it is gathered.
type exportExp struct {
	index   int
	load    ExportLoad
	windows []uint64
}

// held is a record waiting to be written, with its experiment.
type held struct {
	exp int
	rec *engine.Record
}

// NewExport starts the export of p's run; version is perfscen's.
func NewExport(p *Params, version string) *Export {
	return &Export{p: p, version: version, by: map[string]*exportExp{}, spillBytes: defaultSpillBytes, cacheBytes: defaultCacheBytes}
}

// experiment is pt's experiment, made on first sight; x.mu is held.
func (x *Export) experiment(pt *plan.Point) *exportExp {
	if e := x.by[pt.ID]; e != nil {
		return e
	}
	e := &exportExp{index: len(x.order), load: exportLoad(pt), windows: []uint64{}}
	x.by[pt.ID] = e
	x.order = append(x.order, e)
	return e
}

func exportLoad(pt *plan.Point) ExportLoad {
	switch {
	case pt.Load.Distribution == plan.Intervals:
		return ExportLoad{Mode: "request_rate"}
	case pt.Load.Mode == plan.LoadRequestRate:
		return ExportLoad{Mode: "request_rate", Value: pt.Load.Rate}
	}
	return ExportLoad{Mode: "concurrency", Value: float64(max(pt.Load.Concurrency, 1))}
}

// Request records one completed request (engine.Options.Requests): it
// keeps the engine's record as it is. A failed request has no response
// and is left out, as perf_analyzer records successful requests only.
func (x *Export) Request(pt *plan.Point, r *engine.Record) {
	if r.Err != nil {
		return
	}
	x.mu.Lock()
	x.buf = append(x.buf, held{exp: x.experiment(pt).index, rec: r})
	x.bufBytes += heldSize(r)
	var full []held
	if x.bufBytes >= x.spillBytes {
		full, x.buf, x.bufBytes = x.buf, nil, 0
		if x.spill == nil {
			x.spill = newSpiller()
		}
	}
	sp := x.spill
	x.mu.Unlock()
	if full != nil {
		// The worker that filled the buffer hands it over; it waits
		// only if the spill before is still being written.
		sp.add(full)
	}
}

// heldSize estimates what a kept record holds: the record, its response
// times and outputs.
func heldSize(r *engine.Record) int {
	n := 160 + 24*len(r.Responses)
	for _, o := range r.Outputs {
		n += 24 + len(o)
	}
	return n
}

// Window records a measured window's bounds (a WindowDone event).
func (x *Export) Window(pt *plan.Point, start, end time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.experiment(pt)
	e.windows = append(e.windows, ns(start), ns(end))
}

// JSON is the export as perf_analyzer writes it, in memory (Write is
// the same without holding the file).
func (x *Export) JSON() ([]byte, error) {
	var b bytes.Buffer
	err := x.Write(&b)
	return b.Bytes(), err
}

// Close removes the temporary file of spilled records.
func (x *Export) Close() error {
	x.mu.Lock()
	sp := x.spill
	x.spill = nil
	x.mu.Unlock()
	if sp == nil {
		return nil
	}
	return sp.close()
}

// Write writes the export as perf_analyzer does (json.MarshalIndent of
// an ExportFile, two spaces): requests in the order they were sent
// within each experiment. It streams: each request is built, indented
// and written in turn.
func (x *Export) Write(w io.Writer) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	m, err := x.merged()
	if err != nil {
		return err
	}
	recs, recsErr := m.next, m.err
	bw := bufio.NewWriterSize(w, 64<<10)
	cache := &inputCache{x: x, budget: x.cacheBytes, json: map[*inputdata.Step]json.RawMessage{}}
	var scratch, indented bytes.Buffer
	indent := func(v any, prefix string) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		indented.Reset()
		if err := json.Indent(&indented, b, prefix, "  "); err != nil {
			return err
		}
		_, err = bw.Write(indented.Bytes())
		return err
	}
	bw.WriteString("{\n  \"experiments\": [")
	next, more := recs()
	for i, e := range x.order {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    {\n      \"experiment\": ")
		if err := indent(e.load, "      "); err != nil {
			return err
		}
		bw.WriteString(",\n      \"requests\": [")
		n := 0
		for ; more && next.exp == i; next, more = recs() {
			if n > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n        ")
			scratch.Reset()
			if err := x.request(&scratch, next, cache); err != nil {
				return err
			}
			indented.Reset()
			if err := json.Indent(&indented, scratch.Bytes(), "        ", "  "); err != nil {
				return err
			}
			bw.Write(indented.Bytes())
			n++
		}
		if n > 0 {
			bw.WriteString("\n      ")
		}
		bw.WriteString("],\n      \"window_boundaries\": ")
		if err := indent(e.windows, "      "); err != nil {
			return err
		}
		bw.WriteString("\n    }")
	}
	if err := recsErr(); err != nil {
		return err
	}
	if len(x.order) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n  \"version\": ")
	if err := indent("perfscen pa "+x.version, "  "); err != nil {
		return err
	}
	bw.WriteString(",\n  \"service_kind\": ")
	if err := indent(x.p.ServiceKind, "  "); err != nil {
		return err
	}
	bw.WriteString(",\n  \"endpoint\": ")
	if err := indent(x.p.Endpoint, "  "); err != nil {
		return err
	}
	bw.WriteString("\n}")
	return bw.Flush()
}

// exportRequest is ExportRequest with its inputs already in JSON.
type exportRequest struct {
	Timestamp          uint64              `json:"timestamp"`
	SequenceID         uint64              `json:"sequence_id,omitempty"`
	RequestInputs      json.RawMessage     `json:"request_inputs"`
	ResponseTimestamps []uint64            `json:"response_timestamps"`
	ResponseOutputs    []map[string]string `json:"response_outputs"`
}

// request writes r's compact JSON to b.
func (x *Export) request(b *bytes.Buffer, r flat, cache *inputCache) error {
	in, err := cache.inputs(r.step)
	if err != nil {
		return err
	}
	req := exportRequest{Timestamp: r.sent, SequenceID: r.seq, RequestInputs: in,
		ResponseTimestamps: r.resp, ResponseOutputs: make([]map[string]string, len(r.resp))}
	for i := range r.resp {
		req.ResponseOutputs[i] = map[string]string{}
		if i < len(r.out) {
			// A stream ends with [DONE] after its content: two events or
			// more; an unstreamed reply is one.
			req.ResponseOutputs[i]["response"] = sseResponse(r.out[i], len(r.out) > 1)
		}
	}
	if req.ResponseTimestamps == nil {
		req.ResponseTimestamps = []uint64{}
	}
	j, err := json.Marshal(req)
	b.Write(j)
	return err
}

// inputCache holds the JSON of each step's inputs while the file is
// written, up to budget bytes; past it, a step is converted each time it
// is written.
type inputCache struct {
	x      *Export
	budget int
	json   map[*inputdata.Step]json.RawMessage
}

func (c *inputCache) inputs(st *inputdata.Step) (json.RawMessage, error) {
	if b, ok := c.json[st]; ok {
		return b, nil
	}
	b, err := json.Marshal(c.x.inputs(st))
	if err != nil {
		return nil, err
	}
	if len(b) <= c.budget {
		c.budget -= len(b)
		c.json[st] = b
	}
	return b, nil
}

// inputs writes what a request sent, input by input.
func (x *Export) inputs(st *inputdata.Step) map[string]any {
	out := map[string]any{}
	if st == nil {
		return out
	}
	for _, t := range st.Inputs {
		switch {
		case x.p.ServiceKind == "openai" && t.Name == "payload":
			out[t.Name] = string(t.Raw) // the request body, as perf_analyzer writes it
		case x.p.ServiceKind == "dynamic_grpc":
			out[t.Name] = base64.StdEncoding.EncodeToString(t.Raw)
		default:
			v, err := tensor.JSONData(t)
			if err != nil {
				out[t.Name] = base64.StdEncoding.EncodeToString(t.Raw)
				continue
			}
			if s, ok := v.([]string); ok && len(s) == 1 {
				out[t.Name] = s[0]
				continue
			}
			out[t.Name] = v
		}
	}
	return out
}

// sseResponse is a response as perf_analyzer's OpenAI client hands it
// over: a server-sent event as it came on the wire ("data: …\n\n"), or a
// whole reply's body.
func sseResponse(data []byte, event bool) string {
	if !event {
		return string(data)
	}
	return "data: " + string(data) + "\n\n"
}

func ns(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}
