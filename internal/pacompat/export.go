package pacompat

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
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

// Export gathers the records of a run as the engine hands them over.
// Requests and Window may be called from several goroutines.
type Export struct {
	p       *Params
	version string

	mu    sync.Mutex
	order []*ExportExperiment
	by    map[string]*ExportExperiment
}

// NewExport starts the export of p's run; version is perfscen's.
func NewExport(p *Params, version string) *Export {
	return &Export{p: p, version: version, by: map[string]*ExportExperiment{}}
}

// experiment is pt's experiment, made on first sight; x.mu is held.
func (x *Export) experiment(pt *plan.Point) *ExportExperiment {
	if e := x.by[pt.ID]; e != nil {
		return e
	}
	e := &ExportExperiment{Experiment: exportLoad(pt), Requests: []ExportRequest{}, WindowBoundaries: []uint64{}}
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

// Request records one completed request (engine.Options.Requests). A
// failed request has no response and is left out, as perf_analyzer
// records successful requests only.
func (x *Export) Request(pt *plan.Point, r *engine.Record) {
	if r.Err != nil {
		return
	}
	req := ExportRequest{Timestamp: ns(r.Sent), SequenceID: r.SequenceID, RequestInputs: x.inputs(r),
		ResponseTimestamps: make([]uint64, len(r.Responses)), ResponseOutputs: make([]map[string]any, len(r.Responses))}
	for i, t := range r.Responses {
		req.ResponseTimestamps[i] = ns(t)
		req.ResponseOutputs[i] = map[string]any{}
		if i < len(r.Outputs) {
			// A stream ends with [DONE] after its content: two events or
			// more; an unstreamed reply is one.
			req.ResponseOutputs[i]["response"] = sseResponse(r.Outputs[i], len(r.Outputs) > 1)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.experiment(pt)
	e.Requests = append(e.Requests, req)
}

// Window records a measured window's bounds (a WindowDone event).
func (x *Export) Window(pt *plan.Point, start, end time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.experiment(pt)
	e.WindowBoundaries = append(e.WindowBoundaries, ns(start), ns(end))
}

// JSON is the export as perf_analyzer writes it: requests in the order
// they were sent within each experiment.
func (x *Export) JSON() ([]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f := ExportFile{Experiments: []ExportExperiment{}, Version: "perfscen pa " + x.version, ServiceKind: x.p.ServiceKind, Endpoint: x.p.Endpoint}
	for _, e := range x.order {
		cp := *e
		cp.Requests = append([]ExportRequest(nil), e.Requests...)
		sortRequests(cp.Requests)
		f.Experiments = append(f.Experiments, cp)
	}
	return json.MarshalIndent(f, "", "  ")
}

func sortRequests(rs []ExportRequest) {
	slices.SortStableFunc(rs, func(a, b ExportRequest) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
}

// inputs writes what a request sent, input by input.
func (x *Export) inputs(r *engine.Record) map[string]any {
	out := map[string]any{}
	if r.Step == nil {
		return out
	}
	for _, t := range r.Step.Inputs {
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
