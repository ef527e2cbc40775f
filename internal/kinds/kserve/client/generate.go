package client

import (
	"context"
	"time"
)

// Generator is a token-streaming service kind (OpenAI-compatible LLM
// endpoints): one call sends a prepared request body and reports when
// output arrived. The runner stays kind-agnostic: it times the call like
// any other and aggregates the trace.
type Generator interface {
	Generate(ctx context.Context, body []byte, t *TokenTrace) error
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
	// caller may pass a slice to reuse; Generate appends.
	Gaps []time.Duration
	// Chunks counts non-empty content chunks.
	Chunks int
	// OutputTokens is usage.completion_tokens when FromUsage, else Chunks.
	OutputTokens int
	// InputTokens is usage.prompt_tokens; 0 when the server sent no usage.
	InputTokens int
	FromUsage   bool
}

// Reset empties t, keeping the Gaps buffer.
func (t *TokenTrace) Reset() {
	*t = TokenTrace{Gaps: t.Gaps[:0]}
}
