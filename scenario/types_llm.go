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
	InputTokens  TokenLength  `yaml:"input_tokens"`
	OutputTokens *TokenLength `yaml:"output_tokens"`
	Count        int          `yaml:"count"`
	Seed         *uint64      `yaml:"seed"`
	IgnoreEOS    *bool        `yaml:"ignore_eos"`
}

// TokenLength is a normal distribution of token counts.
type TokenLength struct {
	Mean   float64 `yaml:"mean"`
	StdDev float64 `yaml:"stddev"`
}
