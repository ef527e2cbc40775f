package plan

import (
	"fmt"
	"strings"
	"time"
)

// Plan is everything a run needs, already defaulted and validated.
type Plan struct {
	Scenario     string `json:"scenario"`      // scenario name (defaults to the file's base name)
	ScenarioPath string `json:"scenario_path"` // file it was loaded from
	ScenarioHash string `json:"scenario_hash"` // sha256 of the file's bytes, hex
	// Servers are the servers the plan loads: the one server of a
	// scenario's server: (its Name is ""), or the named servers of its
	// servers:, sorted by name, which every Model and Point then names
	// (Model.Server). They are the one place a plan keeps its servers.
	Servers     []Server    `json:"servers"`
	Models      []Model     `json:"models"`
	Measurement Measurement `json:"measurement"`
	Points      []Point     `json:"points"` // in execution order
	Checks      Checks      `json:"checks"`
	// LLM is set for openai-kind servers.
	LLM *LLM `json:"llm,omitempty"`
	// Mixes are the scenario's model mixes; with mixes every point is a
	// member of one (Point.Mix) and Models are the members' models.
	Mixes []Mix `json:"mixes,omitempty"`
	// Searches are measured after Points: each finds the highest load at
	// which its condition holds, probing points it builds as it goes.
	Searches []Search `json:"searches,omitempty"`
	// AbortOn are conditions that stop a point on a window that shows it
	// hopeless (error rate, latency far beyond any bound): a sweep stops
	// there (the check fails), a search counts the probe as failing.
	AbortOn []Threshold `json:"abort_on,omitempty"`
	// Overrides are the --set path=value settings laid over the scenario
	// file, in order, as given; they are part of what was measured.
	Overrides []string `json:"overrides,omitempty"`
}

// Mix is several models under load in the same seconds, each with its own
// load. Its members' points of one step share Point.Together: they run at
// the same time, on one clock, and their windows are cut on the same
// boundaries.
type Mix struct {
	Name string `json:"name"`
	// Members are the members' model aliases (mix/alias), in run order.
	Members []string `json:"members"`
}

// MixOf is the mix named name.
func (p *Plan) MixOf(name string) (Mix, bool) {
	for _, m := range p.Mixes {
		if m.Name == name {
			return m, true
		}
	}
	return Mix{}, false
}

// Server says where requests go. Header values are already resolved from
// the environment; Secret lists header names whose values must never be
// printed or stored.
type Server struct {
	// Name is the server's key under servers:; "" for server:.
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
	// Kind is the service kind: "" or kserve (the default), openai, or
	// another kind of internal/kinds. Every server of a plan has the same
	// kind.
	Kind string `json:"kind,omitempty"`
	// Options is the kind's own block (server.<kind>: …), as written: the
	// kind decodes and checks it when it opens the server.
	Options map[string]any `json:"options,omitempty"`
	// APIKeyEnv and APIKey are an openai-kind server's key under
	// servers:, where each build may have its own; the one server of
	// server: keeps its key in Plan.LLM. The key is never stored.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	APIKey    string `json:"-"`
	// HTTPURL and GRPCURL, when set, are where that protocol's requests go
	// instead of URL: a real server listens on one port per protocol.
	HTTPURL  string   `json:"http_url,omitempty"`
	GRPCURL  string   `json:"grpc_url,omitempty"`
	Protocol Protocol `json:"protocol"` // default for points
	Embedded bool     `json:"embedded"`
	// EmbeddedFlavor is the server the embedded one imitates: "" or
	// "triton" (KServe v2 with Triton's extensions) or "kserve" (core only).
	EmbeddedFlavor string            `json:"embedded_flavor,omitempty"`
	Timeout        time.Duration     `json:"timeout"`
	Headers        map[string]string `json:"-"`
	Secret         []string          `json:"-"`
	TLS            TLS               `json:"tls"`
	MetricsURL     string            `json:"metrics_url,omitempty"`
	// TensorFormat is how HTTP tensors travel (perf_analyzer's
	// --input/output-tensor-format): auto (binary when the server lists the
	// binary tensor data extension, else JSON), binary or json.
	TensorFormat TensorFormat `json:"tensor_format"`
	// EmbeddedModels optionally overrides the embedded server's model set
	// settings (e.g. delay, engine slowdown) by model name; values are
	// model-config parameters as strings.
	EmbeddedModels map[string]map[string]string `json:"embedded_models,omitempty"`
	// Process says where the server's process is, for its CPU time and
	// run-queue delay per inference (server.process).
	Process ServerProcess `json:"process"`
	// ParamsWhere says, for each EmbeddedModels entry, where the scenario
	// names it ("file:line:col: server.embedded_models.delay"), so checks
	// made after loading report at its line.
	ParamsWhere map[string]string `json:"-"`
	// Where says where the scenario writes keys of the server's block,
	// by their path in it ("tls.ca_file", "triton_c_api.model_repository",
	// "grpc.proto_files[0]"): "file:line:col: server.tls.ca_file", the
	// prefix of an error about that key. Kinds check their own block when
	// they open the server (and for perfscen validate, kinds.Checker), long
	// after the scenario was read: their errors still name its line.
	Where map[string]string `json:"-"`
}

// ServerProcess is server.process: how to find the server's process on
// this machine. The zero value finds it: an embedded server accounts its
// own model threads, a server on this machine is the process listening
// on its port, and a remote one is read from its metrics page's
// process_cpu_seconds_total.
type ServerProcess struct {
	// Off measures nothing.
	Off bool `json:"off,omitempty"`
	// PID, PIDFile or Cgroup name the process (with its children) or the
	// cgroup whose processes are the server.
	PID     int    `json:"pid,omitempty"`
	PIDFile string `json:"pid_file,omitempty"`
	Cgroup  string `json:"cgroup,omitempty"`
	// Where is the key's place in the scenario file, for messages.
	Where string `json:"-"`
}

// Protocol is how the client talks KServe v2 to a server.
type Protocol string

// Protocols.
const (
	ProtocolHTTP Protocol = "http" // REST, with Triton's binary tensor extension where the server has it
	ProtocolGRPC Protocol = "grpc" // gRPC, with ModelStreamInfer for streaming
)

// ParseProtocol turns a protocol name from outside the program (a command
// line flag, an imported file) into a Protocol, so nothing past that edge
// holds an unchecked string. The scenario's schema checks its own.
func ParseProtocol(s string) (Protocol, error) {
	switch p := Protocol(s); p {
	case ProtocolHTTP, ProtocolGRPC:
		return p, nil
	}
	return "", fmt.Errorf("protocol %q is neither %s nor %s", s, ProtocolHTTP, ProtocolGRPC)
}

// TensorFormat is how HTTP tensors travel.
type TensorFormat string

// Tensor formats.
const (
	TensorAuto   TensorFormat = "auto"   // binary when the server lists the extension, else JSON
	TensorBinary TensorFormat = "binary" // the binary tensor data extension
	TensorJSON   TensorFormat = "json"   // JSON tensors (FP16/BF16 binary where the extension exists)
)

// ServerOf is the server named name: the one server for "", else the
// named server. ok is false for a name the plan does not hold.
func (p *Plan) ServerOf(name string) (Server, bool) {
	for _, s := range p.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Server is the plan's one server: a scenario's server:, or the server of
// a plan as one server sees it (ForServer). A plan of several servers has
// no one server: Server is then the zero Server.
func (p *Plan) Server() Server {
	if len(p.Servers) != 1 {
		return Server{}
	}
	return p.Servers[0]
}

// Named is true for a plan of named servers (a scenario's servers:):
// its models, points and figures carry their server's name.
func (p *Plan) Named() bool {
	return len(p.Servers) > 0 && p.Servers[0].Name != ""
}

// OpenAI is true for a plan of openai-kind servers.
func (p *Plan) OpenAI() bool {
	for _, s := range p.Servers {
		if s.Kind == KindOpenAI {
			return true
		}
	}
	return false
}

// ForServer is p as one of its servers sees it: that server alone, its
// models and its points. For a plan with one server it is p.
func (p *Plan) ForServer(srv Server) *Plan {
	if len(p.Servers) == 1 {
		return p
	}
	sub := *p
	sub.Servers = []Server{srv}
	sub.Models, sub.Points = nil, nil
	for _, m := range p.Models {
		if m.Server == srv.Name {
			sub.Models = append(sub.Models, m)
		}
	}
	for _, pt := range p.Points {
		if pt.Server == srv.Name {
			sub.Points = append(sub.Points, pt)
		}
	}
	return &sub
}

// URLFor is the address of the server's endpoint for protocol proto.
func (s Server) URLFor(proto Protocol) string {
	switch {
	case proto == ProtocolHTTP && s.HTTPURL != "":
		return s.HTTPURL
	case proto == ProtocolGRPC && s.GRPCURL != "":
		return s.GRPCURL
	}
	return s.URL
}

// TLS holds client TLS options; all paths are resolved relative to the
// scenario file.
type TLS struct {
	Enabled    bool   `json:"enabled"`
	CAFile     string `json:"ca_file,omitempty"`
	CertFile   string `json:"cert_file,omitempty"`
	KeyFile    string `json:"key_file,omitempty"`
	ServerName string `json:"server_name,omitempty"`
	Insecure   bool   `json:"insecure_skip_verify,omitempty"`
}

// Model is one model under test, addressed in checks by Alias.
type Model struct {
	// Alias names the model in checks, point ids and reports; with
	// several servers it is server/alias, so the same model on two
	// servers has two names.
	Alias string `json:"alias"`
	// Server is the name of the server the model is loaded on (a key of
	// Plan.Servers); "" for the one server of server:.
	Server  string `json:"server,omitempty"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Where is where the scenario names the model ("file:line:col:
	// models[0].name"), for errors found after loading.
	Where    string `json:"-"`
	Input    Input  `json:"input"`
	Validate bool   `json:"validate"` // compare outputs with validation_data
	// FloatTolerance is the absolute+relative tolerance for FP outputs.
	FloatTolerance float64 `json:"float_tolerance,omitempty"`
	Sequence       bool    `json:"sequence,omitempty"` // send correlation ids / start / end flags
	// MaxErrorRate is this model's error budget (a fraction); nil means
	// Measurement.MaxErrorRate.
	MaxErrorRate *float64 `json:"max_error_rate,omitempty"`
	// Prompts, for openai-kind servers, generates the requests when the
	// model has no input data file.
	Prompts *Prompts `json:"prompts,omitempty"`
	// Trace and Conversations, for openai-kind servers, are the model's
	// requests instead: a replayed trace or multi-turn sessions.
	Trace         *Trace         `json:"trace,omitempty"`
	Conversations *Conversations `json:"conversations,omitempty"`
	// Mix is the mix this model is a member of ("" outside mixes); the
	// alias is then mix/alias and Base the alias the scenario gave it.
	Mix  string `json:"mix,omitempty"`
	Base string `json:"base,omitempty"`
	// SequenceLength is the number of requests of each sequence fed from
	// data that is not split into sequences (0: perf_analyzer's 20).
	SequenceLength int `json:"sequence_length,omitempty"`
	// SequenceLengthVariation varies the length of each such sequence
	// uniformly by up to this percentage either way, as perf_analyzer's
	// --sequence-length-variation does (0: every sequence has the length).
	SequenceLengthVariation float64 `json:"sequence_length_variation,omitempty"`
}

// Input says where input tensors come from.
type Input struct {
	Kind  string   `json:"kind"`            // random | zero | json | dir
	Paths []string `json:"paths,omitempty"` // json files (several allowed) or one directory
	// Where says, for each of Paths, where the scenario names it
	// ("file:line:col: models[0].input_data"), for errors about the file.
	Where        []string `json:"-"`
	StringLength int      `json:"string_length,omitempty"`
	StringData   string   `json:"string_data,omitempty"`
}

// Measurement mirrors perf_analyzer's measurement options.
type Measurement struct {
	Mode          MeasurementMode `json:"mode"`
	Window        time.Duration   `json:"window"`
	RequestCount  int             `json:"request_count"`
	StabilityPct  float64         `json:"stability_pct"` // e.g. 10 for 10%
	MaxTrials     int             `json:"max_trials"`    // windows allowed to reach stability
	Percentile    int             `json:"percentile"`    // 0: use average latency for stability
	Warmup        time.Duration   `json:"warmup"`
	Trials        int             `json:"trials"` // windows kept after stabilization
	AllowUnstable bool            `json:"allow_unstable"`
	// MaxErrorRate is the error budget of every point: the largest fraction
	// of failed requests in the kept trials that passes (default 0).
	MaxErrorRate float64 `json:"max_error_rate"`
}

// LoadMode is how a point issues requests. It is the one definition of the
// load modes: scenario resolves the YAML string into one of these, and
// runner, report and importer compare against the constants.
type LoadMode string

const (
	// LoadConcurrency keeps a fixed number of requests outstanding.
	LoadConcurrency LoadMode = "concurrency"
	// LoadRequestRate sends on a schedule, whatever the replies do.
	LoadRequestRate LoadMode = "request_rate"
	// LoadIterations is concurrency mode that stops after a fixed request
	// count instead of measuring windows.
	LoadIterations LoadMode = "iterations"
)

// MeasurementMode says what ends a measurement window.
type MeasurementMode string

const (
	TimeWindows  MeasurementMode = "time_windows"  // a window lasts Measurement.Window
	CountWindows MeasurementMode = "count_windows" // a window ends after RequestCount requests
)

// SharedMemory is where a point's tensors travel.
type SharedMemory string

const (
	ShmNone   SharedMemory = "none"   // in the request body
	ShmSystem SharedMemory = "system" // POSIX shared memory registered with the server
	ShmCUDA   SharedMemory = "cuda"   // CUDA IPC memory (not supported by this build)
)

// Distribution is the spacing of request-rate sends.
type Distribution string

const (
	Constant Distribution = "constant"
	Poisson  Distribution = "poisson"
	// Intervals replays Load.Intervals (perf_analyzer's
	// --request-intervals).
	Intervals Distribution = "intervals"
	// TraceSchedule replays a model's trace once, each request at its own
	// time (Load.Intervals are the gaps, Load.Iterations the requests);
	// Rate is the trace's mean rate.
	TraceSchedule Distribution = "trace"
)

// Point is one cell of the sweep matrix for one model.
type Point struct {
	ID            string             `json:"id"`               // stable key, e.g. "onnx/c=10"
	Model         string             `json:"model"`            // alias
	Server        string             `json:"server,omitempty"` // Model's server (Plan.Servers); "" for server:
	Protocol      Protocol           `json:"protocol"`
	SharedMemory  SharedMemory       `json:"shared_memory"`
	OutputShmSize int64              `json:"output_shm_size,omitempty"`
	BatchSize     int                `json:"batch_size"`
	ShapeSet      string             `json:"shape_set,omitempty"`
	Shapes        map[string][]int64 `json:"shapes,omitempty"`
	Load          Load               `json:"load"`
	// Group joins points that must run interleaved (ABAB… trials): points of
	// compared models at the same sweep coordinates share a non-zero Group.
	Group int `json:"group,omitempty"`
	// Mix is the mix the point's model is a member of ("" outside mixes).
	// Together joins the points of one step of a mix: non-zero, they run
	// at the same time on one clock, their windows cut on the same
	// boundaries, and they share Group.
	Mix      string `json:"mix,omitempty"`
	Together int    `json:"together,omitempty"`
	// InputTokens and OutputTokens, set where the sweep gives them (kind
	// openai), replace the model's prompt length means at this point.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	// Coords are the sweep coordinates, used by check selectors
	// (concurrency, request_rate, batch_size, shape_set, protocol,
	// shared_memory, input_tokens, output_tokens, stage, search).
	Coords map[string]string `json:"coords"`
	// Search names the search this point is a probe of ("" for the
	// points of the sweep).
	Search string `json:"search,omitempty"`
	// Stage, for the points of a ramp (load.stages), is the stage this
	// point measures: no stability search, every window kept.
	Stage *Stage `json:"stage,omitempty"`
}

// Load is how requests are issued at a point.
type Load struct {
	Mode             LoadMode     `json:"mode"`
	Concurrency      int          `json:"concurrency,omitempty"`
	Rate             float64      `json:"rate,omitempty"` // requests per second
	Distribution     Distribution `json:"distribution,omitempty"`
	Async            bool         `json:"async,omitempty"`
	Streaming        bool         `json:"streaming,omitempty"`
	WarmupIterations int          `json:"warmup_iterations,omitempty"`
	Iterations       int          `json:"iterations,omitempty"`
	MaxThreads       int          `json:"max_threads,omitempty"` // request_rate worker cap
	// Intervals, with Distribution Intervals, are the gaps between
	// consecutive sends, replayed in a loop; Rate is then their mean rate.
	Intervals []time.Duration `json:"intervals,omitempty"`
}

// Model returns the model with the given alias.
func (p *Plan) Model(alias string) (Model, bool) {
	for _, m := range p.Models {
		if m.Alias == alias {
			return m, true
		}
	}
	return Model{}, false
}

// MixTotalID is the id of a whole mix's figures at the step of a member
// point whose id is mix/alias/load[@step]: mix/all[@step].
func MixTotalID(mix, memberID string) string {
	if _, step, ok := strings.Cut(memberID, "@"); ok {
		return mix + "/all@" + step
	}
	return mix + "/all"
}

// MinComparisonTrials is the fewest kept trials per arm a same-run
// comparison can pass with: its Mann–Whitney test at the default α cannot
// reach significance on fewer (docs/statistics.md), so a scenario whose
// comparisons would measure fewer is refused before any load.
const MinComparisonTrials = 10
