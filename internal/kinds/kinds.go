package kinds

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/procacct"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Kind is one service kind: how perfscen reaches a server of that kind (or
// starts its embedded flavour), what it asks the server before any load,
// how one request is sent and timed, and where the server's own figures
// come from.
type Kind interface {
	// Name is the scenario's server.kind value.
	Name() string
	// Open starts or reaches the one server of p (a plan as that server
	// sees it: its models and its points alone) and checks everything the
	// points need of it before any load: the models exist, the input data
	// fits them, the server offers what the scenario uses. Errors carry a
	// failure kind: invalid input (exit 2) or environment (exit 3).
	Open(ctx context.Context, p *plan.Plan, env Env) (Server, error)
	// Facts are what the scenario knows of the kind before any of its
	// code runs (Facts).
	Facts() Facts
}

// Facts are a kind's scenario-facing facts. The public side cannot import
// the kinds (data flows scenario → plan → run), so the scenario schema's
// server.kind enum and server.<kind> blocks, and schemas/kinds_gen.go
// (what the scenario resolves with), are generated from every kind's
// Facts: go generate ./schemas. A test fails while they differ.
type Facts struct {
	// About says in a few words what the kind measures; the server.kind
	// description lists every kind with its About in parentheses.
	About string
	// Settings is the JSON Schema (draft 2020-12) of the kind's
	// server.<kind> block, nil when it has none. It may refer to the
	// scenario schema's shared definitions (#/$defs/duration).
	Settings []byte
	// Protocol is what the kind's points default to when the scenario
	// names none: plan.ProtocolHTTP when empty.
	Protocol plan.Protocol
	// InProcess kinds start their server inside perfscen from their own
	// settings: the scenario gives no url.
	InProcess bool
}

// Checker is implemented by kinds that can check, without a server, the
// inputs a scenario names and the kind reads (request files), as Open
// would: perfscen validate runs it after loading the scenario, so a bad
// file is reported there too. Errors are the scenario's (exit 2), each
// line "file:line:col: field: problem".
type Checker interface {
	Check(p *plan.Plan) error
}

// Env is what Open may use besides the plan.
type Env struct {
	// ConnectTimeout bounds the wait for the server to become ready.
	ConnectTimeout time.Duration
	// Net, when set, carries embedded servers and client connections in
	// memory instead of TCP on loopback (tests on a fake clock).
	Net *Net
}

// Net is an in-memory network (memnet.Network's Listen and Dial have these
// shapes).
type Net struct {
	Listen func(ctx context.Context, network, addr string) (net.Listener, error)
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DialFunc is n's Dial; nil (TCP) without n.
func (n *Net) DialFunc() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if n == nil {
		return nil
	}
	return n.Dial
}

// Server is one server made ready for load.
type Server interface {
	// Info is what the result records of the server. Embedded and URL
	// say where it lived: URL is the address measured, never the
	// ephemeral one of an embedded server.
	Info() result.ServerInfo
	// Notes are remarks for the result (what the server lacks that the
	// scenario did not need).
	Notes() []string
	// Point prepares one plan point of this server for load; Close on the
	// Point frees what it allocated (shared memory regions).
	Point(ctx context.Context, pt *plan.Point) (Point, error)
	Close() error
}

// Accounted is implemented by servers that may run inside perfscen (an
// embedded server): Accounting returns the server's own CPU accounting
// (its model instances' threads, procacct.Threads) and inside says the
// server runs in perfscen's process at all, so no process on the machine
// is the server alone. A server reached over the network answers nil,
// false, and is found from its listening socket or its metrics page.
type Accounted interface {
	Accounting() (src procacct.Source, inside bool)
}

// GPUGauges is implemented by servers whose metrics endpoint carries the
// device gauges (Triton's nv_gpu_* on its metrics port): the engine samples
// it through every window and records GPU utilisation, memory and power.
// Other kinds' metrics endpoints hold other figures (TF Serving's request
// counters), so the engine asks the server rather than reading the
// scenario's metrics_url itself.
type GPUGauges interface {
	// GPUMetricsURL is the endpoint to sample; "" when there is none.
	GPUMetricsURL() string
}

// Point is one plan point's load, shared read-only by its workers.
type Point interface {
	// Data are the point's requests, walked by the engine's cursors.
	Data() *inputdata.Data
	// NewCaller gives worker its own caller; the engine's goroutine for
	// that worker is its only user.
	NewCaller(ctx context.Context, worker int) (Caller, error)
	// Stats reads the server's cumulative counters for the point's model.
	// ErrNoStats says the kind or server has none; the engine then
	// measures without a server-side breakdown.
	Stats(ctx context.Context) (Counters, error)
	// Close frees what the point allocated, whatever happened before.
	Close() error
}

// Versioned is a Point that can say which version of its model the
// server measured when the scenario named none (Triton picks the latest
// it has loaded): the result records it.
type Versioned interface {
	ModelVersion(ctx context.Context) (string, bool)
}

// ErrNoStats is returned by Point.Stats when there are no server
// statistics to read.
var ErrNoStats = fmt.Errorf("the server offers no statistics")

// Caller sends one worker's requests, one at a time.
type Caller interface {
	// Call sends req and fills out. clock reads the session's monotonic
	// clock: Call stamps out.Sent just before the request leaves and
	// out.Done when the reply is complete, and validates outputs (when
	// req.Check) only after that. A per-request failure is out.Err, never
	// a panic or a lost sample.
	Call(ctx context.Context, clock func() time.Duration, req *Request, out *Outcome)
	Close() error
}

// Request is one send of a step of the point's data.
type Request struct {
	Step inputdata.Request
	// Index is the step's flat index over every stream of the point's data
	// (stream offsets plus Step.Index): a caller may prepare each step's
	// request once and reuse it.
	Index int
	// Seq is set for sequence models: the correlation id and the flags of
	// this step.
	Seq *Sequence
	// Check asks the caller to compare the reply's outputs with
	// Step.Expected.
	Check bool
}

// Sequence places a request in a sequence (Triton's sequence batcher).
type Sequence struct {
	ID         uint64
	Start, End bool
}

// Outcome is what a caller observed of one request. Times are offsets on
// the session's clock.
type Outcome struct {
	Sent, Done time.Duration

	// SendRecv is the client's own time (encode, write, read, decode);
	// Wait is the rest: from the request leaving until the first byte of
	// the reply.
	SendRecv, Wait time.Duration

	// Streams of decoupled models: when the first response with data came
	// (Done is the final response) and how many responses carried data.
	First     time.Duration
	Responses int
	Decoupled bool

	Err error // nil on success

	Checked  bool   // outputs were validated
	Mismatch string // first validation difference, "" when equal

	// Tokens is set by generation kinds (openai): what the stream showed.
	Tokens *TokenTrace
}

// Counters are a model's cumulative server-side statistics: request and
// execution counts and time totals, as Triton's statistics extension
// reports them. Kinds with fewer figures leave the rest zero.
type Counters struct {
	Inferences    uint64 // inferences (batch elements) performed
	Executions    uint64 // model executions (batches)
	Success       Duration
	Fail          Duration
	Queue         Duration
	ComputeInput  Duration
	ComputeInfer  Duration
	ComputeOutput Duration
}

// Duration is a counted total of time.
type Duration struct {
	Count uint64
	Ns    uint64
	// StepNs is how finely the source printed Ns, when coarser than a
	// nanosecond (TF Serving prints its latency sum with 6 significant
	// digits: at 1.23457e+09 µs a step of 10 ms); 0 when exact.
	StepNs uint64
}

// Sub is d − earlier, never below zero.
func (d Duration) Sub(earlier Duration) Duration {
	return Duration{Count: subClamp(d.Count, earlier.Count), Ns: subClamp(d.Ns, earlier.Ns), StepNs: d.StepNs}
}

func subClamp(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// TokenTrace is what a generation call observed. Times are offsets from
// the moment the call started sending.
type TokenTrace struct {
	// Streamed is true when the reply came as a stream of chunks; only
	// then are FirstToken and Gaps measured.
	Streamed bool
	// FirstToken is send → first chunk with non-empty content.
	FirstToken time.Duration
	// Last is send → last chunk with non-empty content.
	Last time.Duration
	// Gaps are the times between consecutive non-empty content chunks. The
	// caller may pass a slice to reuse; the generator appends.
	Gaps []time.Duration
	// Chunks counts non-empty content chunks.
	Chunks int
	// OutputTokens is usage.completion_tokens when FromUsage, else Chunks.
	OutputTokens int
	// InputTokens is usage.prompt_tokens; 0 when the server sent no usage.
	InputTokens int
	FromUsage   bool
	// Written is send → the request fully written to the connection: the
	// client's own part of the exchange before the server can answer.
	Written time.Duration
	// Capture asks the generator to keep every response event as it
	// came (Events), for per-request records; off, nothing is kept.
	Capture bool
	// Events are the reply's events when Capture: each server-sent
	// event's data as received (the [DONE] marker included), or the whole
	// reply of an unstreamed request.
	Events []ResponseEvent
	// KeepText asks the generator to gather the reply's content into
	// Text: a conversation sends it back in its next turn.
	KeepText bool
	Text     []byte
	// Turn is the request's place in its conversation, from 1; 0 for a
	// request outside any conversation.
	Turn int
}

// ResponseEvent is one response of a generation call: when it came (send
// → event) and its data.
type ResponseEvent struct {
	At   time.Duration
	Data []byte
}

// Reset empties t, keeping the Gaps and Text buffers, Capture, KeepText
// and Turn.
func (t *TokenTrace) Reset() {
	*t = TokenTrace{Gaps: t.Gaps[:0], Capture: t.Capture, KeepText: t.KeepText, Text: t.Text[:0], Turn: t.Turn}
}

// EngineGauges is implemented by servers whose metrics endpoint publishes
// an LLM engine's figures (requests running and waiting, KV-cache usage,
// prefix-cache queries and hits): the engine samples it through every
// window, as it does GPU gauges.
type EngineGauges interface {
	// EngineMetricsURL is the endpoint sampled, for notes; "" when there
	// is none (nothing is sampled).
	EngineMetricsURL() string
	// ScrapeEngine reads the figures now, by model.
	ScrapeEngine(ctx context.Context) (EngineReading, error)
}

// EngineReading is one scrape of an LLM engine's figures, by the model
// they are labelled with ("" for figures without a model label). A
// figure the server does not publish is nil.
type EngineReading map[string]EngineFigures

// EngineFigures are an engine's gauges and cumulative counters.
type EngineFigures struct {
	Running, Waiting, KVCacheUsage *float64
	// PrefixQueries and PrefixHits are cumulative token counts.
	PrefixQueries, PrefixHits *float64
}

// For picks the figures of model: its own, else those without a model
// label (a server of one model), else none.
func (r EngineReading) For(model string) (EngineFigures, bool) {
	if f, ok := r[model]; ok {
		return f, true
	}
	f, ok := r[""]
	return f, ok
}

// Set holds the kinds a program knows, by name.
type Set struct {
	byName map[string]Kind
	order  []Kind
}

// NewSet builds a set; two kinds of one name are a programming error.
func NewSet(ks ...Kind) Set {
	s := Set{byName: map[string]Kind{}}
	for _, k := range ks {
		if _, dup := s.byName[k.Name()]; dup {
			panic("kinds: " + k.Name() + " given twice")
		}
		s.byName[k.Name()] = k
		s.order = append(s.order, k)
	}
	return s
}

// All lists the kinds in the order they were given.
func (s Set) All() []Kind {
	return slices.Clone(s.order)
}

// Lookup returns the kind named name; "" is the default kind, kserve.
func (s Set) Lookup(name string) (Kind, error) {
	if name == "" {
		name = plan.KindKServe
	}
	if k, ok := s.byName[name]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("server kind %q isn't one of [%s]", name, strings.Join(s.Names(), ", "))
}

// Names lists the kinds, sorted.
func (s Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
