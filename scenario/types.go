package scenario

// Scenario is a scenario file as written, before defaults. Durations, sizes
// and percentages stay strings here; Expand resolves them. The yaml tags
// must match schemas/scenario.schema.json (a test walks both).
type Scenario struct {
	Version     int    `yaml:"version"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Server      Server `yaml:"server"`
	// Servers, instead of Server, names several servers measured in one
	// run (e.g. a released and a candidate build); models then name their
	// server as server/model.
	Servers     map[string]Server `yaml:"servers"`
	Models      []Model           `yaml:"models"`
	Load        LoadSpec          `yaml:"load"`
	Sweep       Sweep             `yaml:"sweep"`
	Measurement Measurement       `yaml:"measurement"`
	Thresholds  []Threshold       `yaml:"thresholds"`
	Comparisons []Comparison      `yaml:"comparisons"`
	Baseline    *Baseline         `yaml:"baseline"`
	Gate        *Gate             `yaml:"gate"`
	LLM         *LLM              `yaml:"llm"`
	// Mixes, when given, measure the models in mixes only: each mix runs
	// its models at the same time, each with its own load.
	Mixes []Mix `yaml:"mixes"`
	// Searches find the highest load meeting a condition, a figure each.
	Searches []SearchSpec `yaml:"searches"`
	// AbortOn are threshold expressions that stop a point, and the run,
	// on a window that shows the load hopeless.
	AbortOn []string `yaml:"abort_on"`

	// Path is the file the scenario came from; Hash the sha256 of its bytes.
	Path string `yaml:"-"`
	Hash string `yaml:"-"`
	// Overrides are the --set path=value settings laid over the file
	// before it was checked, as given.
	Overrides []string `yaml:"-"`

	res *resolved // filled by Load's semantic pass, read by Expand
}

// Server says which server to load.
type Server struct {
	URL            string                       `yaml:"url"`
	HTTPURL        string                       `yaml:"http_url"`
	GRPCURL        string                       `yaml:"grpc_url"`
	Kind           string                       `yaml:"kind"`
	Endpoint       string                       `yaml:"endpoint"`
	APIKeyEnv      string                       `yaml:"api_key_env"`
	Protocol       string                       `yaml:"protocol"`
	Embedded       bool                         `yaml:"embedded"`
	EmbeddedFlavor string                       `yaml:"embedded_flavor"`
	EmbeddedModels map[string]map[string]string `yaml:"embedded_models"`
	Timeout        string                       `yaml:"timeout"`
	Headers        map[string]string            `yaml:"headers"`
	TLS            *TLS                         `yaml:"tls"`
	MetricsURL     string                       `yaml:"metrics_url"`
	TensorFormat   string                       `yaml:"tensor_format"`
	// Process says where the server's process is, for its CPU time and
	// run-queue delay per inference; left out, it is found.
	Process *ServerProcess `yaml:"process"`
	// KindBlocks holds the kind-specific block (server.<kind>: …) of kinds
	// with settings of their own, as written; the schema names the blocks
	// and checks their keys, and the kind reads its block when it opens
	// the server.
	KindBlocks map[string]any `yaml:",inline"`
}

// ServerProcess is server.process: off, or the server's process by PID,
// PID file (relative to the scenario file) or cgroup folder.
type ServerProcess struct {
	Off     bool   `yaml:"off"`
	PID     int    `yaml:"pid"`
	PIDFile string `yaml:"pid_file"`
	Cgroup  string `yaml:"cgroup"`
}

// TLS are client TLS options; file paths are relative to the scenario file.
type TLS struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Model is one model under test.
type Model struct {
	Name            string             `yaml:"name"`
	Version         string             `yaml:"version"`
	Alias           string             `yaml:"alias"`
	BatchSize       int                `yaml:"batch_size"`
	Shapes          map[string][]int64 `yaml:"shapes"`
	InputData       StringList         `yaml:"input_data"`
	StringLength    int                `yaml:"string_length"`
	StringData      string             `yaml:"string_data"`
	ValidateOutputs bool               `yaml:"validate_outputs"`
	FloatTolerance  float64            `yaml:"float_tolerance"`
	Sequence        bool               `yaml:"sequence"`
	MaxErrorRate    string             `yaml:"max_error_rate"`
	Prompts         *Prompts           `yaml:"prompts"`
	// Trace and Conversations (kind openai) are the model's requests:
	// a replayed trace, or multi-turn sessions.
	Trace          *Trace         `yaml:"trace"`
	Conversations  *Conversations `yaml:"conversations"`
	SequenceLength int            `yaml:"sequence_length"`
	// SequenceLengthVariation varies each sequence's length by up to this
	// percentage either way (perf_analyzer's --sequence-length-variation).
	SequenceLengthVariation float64 `yaml:"sequence_length_variation"`
}

// LoadSpec is how requests are issued; shared memory lives here because it is a
// property of how tensors travel, for every model alike.
type LoadSpec struct {
	Mode         string  `yaml:"mode"`
	Concurrency  int     `yaml:"concurrency"`
	RequestRate  float64 `yaml:"request_rate"`
	Distribution string  `yaml:"distribution"`
	// RequestIntervals is a file of the gaps between sends in
	// microseconds, one a line, replayed in a loop (perf_analyzer's
	// --request-intervals).
	RequestIntervals       string `yaml:"request_intervals"`
	Async                  bool   `yaml:"async"`
	Streaming              bool   `yaml:"streaming"`
	WarmupIterations       int    `yaml:"warmup_iterations"`
	Iterations             int    `yaml:"iterations"`
	MaxThreads             int    `yaml:"max_threads"`
	SharedMemory           string `yaml:"shared_memory"`
	OutputSharedMemorySize string `yaml:"output_shared_memory_size"`
	// Stages ramp the load over time (k6's stages): each goes from the
	// previous target (0 before the first) to its own over its duration.
	Stages []StageSpec `yaml:"stages"`
}

// StageSpec is one stage of a ramp.
type StageSpec struct {
	Duration string  `yaml:"duration"`
	Target   float64 `yaml:"target"`
}

// SearchSpec is one search: the highest load of a range (concurrency or
// request_rate) at which While holds.
type SearchSpec struct {
	Name           string     `yaml:"name"`
	Models         StringList `yaml:"models"`
	Concurrency    string     `yaml:"concurrency"`
	RequestRate    string     `yaml:"request_rate"`
	Method         string     `yaml:"method"`
	While          string     `yaml:"while"`
	SLO            string     `yaml:"slo"`
	Decide         string     `yaml:"decide"`
	Confidence     string     `yaml:"confidence"`
	MaxExtraTrials *int       `yaml:"max_extra_trials"`
	Threshold      string     `yaml:"threshold"`
}

// Sweep lists the swept dimensions; the plan is their cartesian product.
type Sweep struct {
	Concurrency  StringList `yaml:"concurrency"`
	RequestRate  StringList `yaml:"request_rate"`
	BatchSize    StringList `yaml:"batch_size"`
	Shapes       []ShapeSet `yaml:"shapes"`
	Protocol     StringList `yaml:"protocol"`
	SharedMemory StringList `yaml:"shared_memory"`
	// InputTokens and OutputTokens (kind openai) sweep the synthetic
	// prompts' mean input length and max_tokens.
	InputTokens  StringList `yaml:"input_tokens"`
	OutputTokens StringList `yaml:"output_tokens"`
}

// ShapeSet is a named set of input shapes, one sweep value.
type ShapeSet struct {
	Name   string             `yaml:"name"`
	Shapes map[string][]int64 `yaml:"shapes"`
}

// Measurement mirrors perf_analyzer's measurement options.
type Measurement struct {
	Mode          string `yaml:"mode"`
	Window        string `yaml:"window"`
	RequestCount  int    `yaml:"request_count"`
	Stability     string `yaml:"stability"`
	MaxTrials     int    `yaml:"max_trials"`
	Percentile    int    `yaml:"percentile"`
	Warmup        string `yaml:"warmup"`
	Trials        int    `yaml:"trials"`
	AllowUnstable bool   `yaml:"allow_unstable"`
	MaxErrorRate  string `yaml:"max_error_rate"`
}

// At selects sweep coordinates; values are compared canonically.
type At struct {
	Concurrency  StringList `yaml:"concurrency"`
	RequestRate  StringList `yaml:"request_rate"`
	BatchSize    StringList `yaml:"batch_size"`
	ShapeSet     StringList `yaml:"shape_set"`
	Protocol     StringList `yaml:"protocol"`
	SharedMemory StringList `yaml:"shared_memory"`
	InputTokens  StringList `yaml:"input_tokens"`
	OutputTokens StringList `yaml:"output_tokens"`
	Stage        StringList `yaml:"stage"`
	Search       StringList `yaml:"search"`
}

// Threshold is written either as a bare expression string or as a mapping.
type Threshold struct {
	Check  string   `yaml:"check"`
	Models []string `yaml:"models"`
	At     At       `yaml:"at"`
}

// Comparison is written either as a mapping or as a sentence
// "trt.throughput >= 1.15 * onnx.throughput" (kept in Sentence).
type Comparison struct {
	Name      string  `yaml:"name"`
	Candidate string  `yaml:"candidate"`
	Reference string  `yaml:"reference"`
	Metric    string  `yaml:"metric"`
	MinRatio  float64 `yaml:"min_ratio"`
	MaxRatio  float64 `yaml:"max_ratio"`
	// UnchangedRatio is the ratio of two arms that do not differ (1 for
	// two builds of one model): when set, a fail needs a change from it
	// shown and a ratio beyond the bound, not the ratio shown beyond the
	// bound (docs/scenario.md, "How a comparison is decided").
	UnchangedRatio float64 `yaml:"unchanged_ratio"`
	At             At      `yaml:"at"`
	Alpha          float64 `yaml:"alpha"`

	Sentence string `yaml:"-"`
}

// Baseline configures the history gate.
type Baseline struct {
	Path       string            `yaml:"path"`
	Tolerances map[string]string `yaml:"tolerances"`
	Metrics    []string          `yaml:"metrics"`
	Confidence float64           `yaml:"confidence"`
	Keep       int               `yaml:"keep"`
	MinRuns    int               `yaml:"min_runs"`
	Testbed    string            `yaml:"testbed"`
	Required   bool              `yaml:"required"`
}

// Gate bounds the extra trials measured for checks that cannot decide yet.
type Gate struct {
	MaxExtraTrials *int   `yaml:"max_extra_trials"`
	MaxExtraTime   string `yaml:"max_extra_time"`
	// RequireGated: a check that could not detect the change it exists
	// for makes the run inconclusive (exit 4) instead of passing.
	RequireGated bool `yaml:"require_gated"`
}

// Mix is several models loaded at the same time. Models maps a model (its
// alias, or server/alias) to its load in the mix.
type Mix struct {
	Name string `yaml:"name"`
	// RequestRate is the mix's total rate that shares divide: a number, or
	// "sweep" to follow sweep.request_rate.
	RequestRate string             `yaml:"request_rate"`
	Models      map[string]MixLoad `yaml:"models"`
}

// MixLoad is one model's load in a mix: exactly one of a concurrency, a
// request rate (each a number or "sweep" to follow the scenario's sweep of
// that dimension) or a share of the mix's request_rate.
type MixLoad struct {
	Concurrency string `yaml:"concurrency"`
	RequestRate string `yaml:"request_rate"`
	Share       string `yaml:"share"`
}
