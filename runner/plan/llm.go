package plan

import "time"

// Service kinds (Server.Kind).
const (
	KindKServe = "kserve" // KServe v2 / Triton (the default)
	KindOpenAI = "openai" // OpenAI-compatible LLM endpoints
)

// LLM is how an openai-kind run talks to the server and judges requests.
type LLM struct {
	// Endpoint is v1/chat/completions, v1/completions or v1/embeddings.
	Endpoint string `json:"endpoint"`
	// APIKeyEnv names the environment variable the key came from; the key
	// itself is never stored or printed.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	APIKey    string `json:"-"`
	// Stream asks for server-sent events; TTFT and inter-token figures
	// need it.
	Stream bool `json:"stream"`
	// IncludeUsage sets stream_options.include_usage on streamed requests.
	IncludeUsage bool `json:"include_usage"`
	// TokenCount is where output token counts come from: auto (usage when
	// the reply has it, else counted content chunks), usage (a reply
	// without usage is a failed request) or chunks.
	TokenCount string `json:"token_count"`
	// Goodput is the SLO a request must meet to count towards goodput;
	// nil means goodput is not measured.
	Goodput *SLO `json:"goodput,omitempty"`
}

// SLO bounds per-request figures; zero fields are not constrained.
type SLO struct {
	TTFT time.Duration `json:"ttft,omitempty"` // time to first token
	ITL  time.Duration `json:"itl,omitempty"`  // per-request (e2e − TTFT)/(tokens − 1)
	E2E  time.Duration `json:"e2e,omitempty"`  // end-to-end latency
}

// Prompts describe synthetic generation requests: lengths in tokens drawn
// from normal distributions (rounded, at least 1), Count distinct
// requests, reproducible from Seed.
type Prompts struct {
	InputMean   float64 `json:"input_mean"`
	InputStdDev float64 `json:"input_stddev,omitempty"`
	// OutputMean 0 leaves max_tokens to the server.
	OutputMean   float64 `json:"output_mean,omitempty"`
	OutputStdDev float64 `json:"output_stddev,omitempty"`
	Count        int     `json:"count"`
	Seed         uint64  `json:"seed"`
	// IgnoreEOS pins the output length at max_tokens (vLLM, TensorRT-LLM).
	IgnoreEOS bool `json:"ignore_eos"`
	// SharedPrefix, when set, starts the prompts with shared system prompts.
	SharedPrefix *SharedPrefix `json:"shared_prefix,omitempty"`
}

// PromptsAt is the model's synthetic prompts at pt: the swept lengths
// replace the means, the spread, count and seed stay. Nil when the model
// has no prompts.
func (m Model) PromptsAt(pt *Point) *Prompts {
	if m.Prompts == nil {
		return nil
	}
	pr := *m.Prompts
	if pt.InputTokens > 0 {
		pr.InputMean = float64(pt.InputTokens)
	}
	if pt.OutputTokens > 0 {
		pr.OutputMean = float64(pt.OutputTokens)
	}
	return &pr
}

// EndpointEmbeddings is the embeddings API: one request embeds a batch of
// inputs (Point.BatchSize), and nothing is generated.
const EndpointEmbeddings = "v1/embeddings"

// SharedPrefix starts every synthetic prompt with one of Count system
// prompts of Tokens tokens.
type SharedPrefix struct {
	Count  int `json:"count"`
	Tokens int `json:"tokens"`
}

// Trace is a Mooncake-format trace replayed once per point, each request
// at its timestamp ÷ Speedup: prompts of input_length tokens made of
// BlockSize-token blocks, equal hash_ids giving equal blocks, and replies
// of output_length tokens.
type Trace struct {
	Path string `json:"path"`
	// Where is where the scenario names the file, for errors found
	// after loading.
	Where     string  `json:"-"`
	BlockSize int     `json:"block_size"`
	Speedup   float64 `json:"speedup"`
	// LengthScale multiplies every prompt's length and the block size
	// (llmtrace.Trace.Scaled); 1 replays the trace's own lengths.
	LengthScale float64 `json:"length_scale,omitempty"`
	Requests    int     `json:"requests"`
	Seed        uint64  `json:"seed"`
	IgnoreEOS   bool    `json:"ignore_eos"`
}

// Conversations are Count multi-turn chat sessions of Turns turns: each
// turn sends the system prompt, every earlier message and reply, and a
// new user message; ThinkTime passes between a reply and the next turn.
type Conversations struct {
	Count        int           `json:"count"`
	Turns        int           `json:"turns"`
	SystemTokens int           `json:"system_tokens,omitempty"`
	UserMean     float64       `json:"user_mean"`
	UserStdDev   float64       `json:"user_stddev,omitempty"`
	OutputMean   float64       `json:"output_mean,omitempty"`
	OutputStdDev float64       `json:"output_stddev,omitempty"`
	ThinkTime    time.Duration `json:"think_time,omitempty"`
	Seed         uint64        `json:"seed"`
	IgnoreEOS    bool          `json:"ignore_eos"`
}
