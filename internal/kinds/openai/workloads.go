package openai

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/perfscen/perfscen/internal/llmtrace"
)

// words draws n words of the vocabulary from r, space-separated, onto sb.
func words(sb *strings.Builder, r *rand.Rand, n int) {
	for j := range n {
		if j > 0 || sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
}

// sharedPrefixes are the system prompts of a shared-prefix workload: count
// prompts of n words, each from its own seeded stream, so the same
// scenario gives the same prefixes on every run.
func sharedPrefixes(seed uint64, count, n int) []string {
	out := make([]string, count)
	for k := range out {
		var sb strings.Builder
		words(&sb, rand.New(rand.NewPCG(seed, 0x70726566^uint64(k))), n)
		out[k] = sb.String()
	}
	return out
}

// TraceOptions say how a trace's prompts are made.
type TraceOptions struct {
	BlockSize int
	Seed      uint64
	IgnoreEOS bool
}

// TraceBodies turns each request of a Mooncake trace into a body: a prompt
// of input_length words built from blocks of BlockSize words, block k of
// the prompt being the words of hash_ids[k] (so requests naming the same
// ids share those blocks, and a server's prefix cache sees the sharing the
// trace recorded), the blocks past hash_ids and the request's own; and
// max_tokens output_length. On a real tokenizer a word is about one token.
func TraceBodies(t *llmtrace.Trace, to TraceOptions, o BodyOptions) ([][]byte, error) {
	if to.BlockSize < 1 {
		return nil, fmt.Errorf("trace %s: block size %d", t.Path, to.BlockSize)
	}
	blocks := map[int64][]string{}
	block := func(id int64) []string {
		if b, ok := blocks[id]; ok {
			return b
		}
		r := rand.New(rand.NewPCG(to.Seed, 0x626c6f636b^uint64(id)))
		b := make([]string, to.BlockSize)
		for i := range b {
			b[i] = vocabulary[r.IntN(len(vocabulary))]
		}
		blocks[id] = b
		return b
	}
	out := make([][]byte, 0, len(t.Requests))
	var sb strings.Builder
	for i, rq := range t.Requests {
		sb.Reset()
		own := rand.New(rand.NewPCG(to.Seed, 0x6f776e^uint64(i)))
		for k := 0; k*to.BlockSize < rq.Input; k++ {
			n := min(to.BlockSize, rq.Input-k*to.BlockSize)
			if k < len(rq.HashIDs) {
				for _, w := range block(rq.HashIDs[k])[:n] {
					if sb.Len() > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(w)
				}
				continue
			}
			words(&sb, own, n)
		}
		req := map[string]any{"model": o.Model, "max_tokens": rq.Output}
		if to.IgnoreEOS {
			req["ignore_eos"] = true
		}
		setPrompt(req, o, "", sb.String())
		b, err := finish(req, o)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// setPrompt puts the prompt in the request the endpoint's way: a system
// message (when there is a system prompt) and a user message for chat, one
// prompt string otherwise.
func setPrompt(req map[string]any, o BodyOptions, system, user string) {
	if o.Endpoint == EndpointChat {
		var msgs []map[string]string
		if system != "" {
			msgs = append(msgs, map[string]string{"role": "system", "content": system})
		}
		req["messages"] = append(msgs, map[string]string{"role": "user", "content": user})
		return
	}
	if system != "" {
		user = system + " " + user
	}
	req["prompt"] = user
}

// ConversationOptions describe multi-turn sessions (plan.Conversations).
type ConversationOptions struct {
	Count, Turns             int
	SystemTokens             int
	UserMean, UserStdDev     float64
	OutputMean, OutputStdDev float64 // OutputMean 0: no max_tokens
	Seed                     uint64
	IgnoreEOS                bool
}

// Conversation is one session's script: its system prompt and each
// turn's user message and output budget. The replies come from the
// server as the session runs.
type Conversation struct {
	System string
	Turns  []Turn
}

// Turn is one user message of a conversation.
type Turn struct {
	User      string
	MaxTokens int // 0: the server's default
}

// Conversations writes the scripts of c.Count sessions.
func Conversations(c ConversationOptions) ([]Conversation, error) {
	if c.Count < 1 || c.Turns < 1 || c.UserMean < 1 {
		return nil, fmt.Errorf("conversations: count %d, turns %d and user mean %g must be at least 1", c.Count, c.Turns, c.UserMean)
	}
	r := rand.New(rand.NewPCG(c.Seed, 0x636f6e76))
	out := make([]Conversation, c.Count)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		words(&sb, r, c.SystemTokens)
		cv := Conversation{System: sb.String(), Turns: make([]Turn, c.Turns)}
		for k := range cv.Turns {
			sb.Reset()
			words(&sb, r, length(r, c.UserMean, c.UserStdDev))
			cv.Turns[k].User = sb.String()
			if c.OutputMean > 0 {
				cv.Turns[k].MaxTokens = length(r, c.OutputMean, c.OutputStdDev)
			}
		}
		out[i] = cv
	}
	return out, nil
}
