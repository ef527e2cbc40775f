package scenario

// LLM holds the openai-kind request and measurement settings.
type LLM struct {
	Stream       *bool    `yaml:"stream"`
	IncludeUsage *bool    `yaml:"include_usage"`
	TokenCount   string   `yaml:"token_count"`
	Goodput      *Goodput `yaml:"goodput"`
}

// Goodput is the SLO of a good request; durations as written.
type Goodput struct {
	TTFT string `yaml:"ttft"`
	ITL  string `yaml:"itl"`
	E2E  string `yaml:"e2e"`
}

// Prompts describe synthetic generation requests.
type Prompts struct {
	InputTokens  TokenLength   `yaml:"input_tokens"`
	OutputTokens *TokenLength  `yaml:"output_tokens"`
	Count        int           `yaml:"count"`
	Seed         *uint64       `yaml:"seed"`
	IgnoreEOS    *bool         `yaml:"ignore_eos"`
	SharedPrefix *SharedPrefix `yaml:"shared_prefix"`
}

// TokenLength is a normal distribution of token counts.
type TokenLength struct {
	Mean   float64 `yaml:"mean"`
	StdDev float64 `yaml:"stddev"`
}

// SharedPrefix starts every synthetic prompt with one of Count system
// prompts of Tokens tokens (vLLM's prefix-repetition data set).
type SharedPrefix struct {
	Count  int `yaml:"count"`
	Tokens int `yaml:"tokens"`
}

// Trace replays a Mooncake-format request trace (internal/llmtrace).
type Trace struct {
	File      string   `yaml:"file"`
	BlockSize int      `yaml:"block_size"`
	Speedup   *float64 `yaml:"speedup"`
	// LengthScale multiplies every prompt, blocks included.
	LengthScale *float64 `yaml:"length_scale"`
	Seed        *uint64  `yaml:"seed"`
	IgnoreEOS   *bool    `yaml:"ignore_eos"`
}

// Conversations are multi-turn chat sessions: every turn sends the whole
// history and a new user message.
type Conversations struct {
	Count        int          `yaml:"count"`
	Turns        int          `yaml:"turns"`
	SystemTokens int          `yaml:"system_tokens"`
	UserTokens   TokenLength  `yaml:"user_tokens"`
	OutputTokens *TokenLength `yaml:"output_tokens"`
	ThinkTime    string       `yaml:"think_time"`
	Seed         *uint64      `yaml:"seed"`
	IgnoreEOS    *bool        `yaml:"ignore_eos"`
}
