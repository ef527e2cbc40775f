package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/tensor"
)

// convPlan is what the callers of a multi-turn point share, read-only.
type convPlan struct {
	scripts   []Conversation
	think     time.Duration
	ignoreEOS bool
	body      BodyOptions
}

// conversationData is the point's data: one stream per conversation, one
// step per turn, so each worker plays a conversation from its first turn
// to its last before taking the next (the engine's cursors walk streams
// that way). A step's input is the turn's user message, for the record;
// the caller builds the body from the history it holds.
func conversationData(convs []Conversation) *inputdata.Data {
	d := &inputdata.Data{Streams: make([][]inputdata.Step, len(convs)), Sequences: true, BatchSize: 1}
	for i, c := range convs {
		steps := make([]inputdata.Step, len(c.Turns))
		for k, t := range c.Turns {
			steps[k] = inputdata.Step{Inputs: []tensor.Tensor{{Name: "user", DataType: tensor.BYTES, Shape: []int64{1}, Raw: []byte(t.User)}},
				Origin: fmt.Sprintf("conversation %d turn %d", i+1, k+1)}
		}
		d.Streams[i] = steps
	}
	return d
}

// message is one chat message of a conversation's history.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatBody is a turn's request.
type chatBody struct {
	Model         string         `json:"model"`
	Messages      []message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	IgnoreEOS     bool           `json:"ignore_eos,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

// convCaller is one worker's side of its conversations: the history of
// the one it is in. Its worker's goroutine is its only user.
type convCaller struct {
	p    *point
	hist []message
}

// Call sends the next turn: the system prompt, every earlier message and
// reply, and the turn's user message. Between turns it waits the think
// time first, which no latency counts (the send is stamped after it). A
// reply's text joins the history; a failed turn leaves its message and
// reply out, and the conversation goes on without them.
func (c *convCaller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	cp := c.p.conv
	if r.Step.Stream >= len(cp.scripts) || r.Step.Index >= len(cp.scripts[r.Step.Stream].Turns) {
		out.Err = fmt.Errorf("conversation turn %s is not in the script", r.Step.Origin)
		return
	}
	script := cp.scripts[r.Step.Stream]
	turn := script.Turns[r.Step.Index]
	if r.Step.Index == 0 {
		c.hist = c.hist[:0]
		if script.System != "" {
			c.hist = append(c.hist, message{Role: "system", Content: script.System})
		}
	} else if cp.think > 0 && !pause(ctx, cp.think) {
		out.Sent, out.Done = clock(), clock()
		out.Err = ctx.Err()
		return
	}
	c.hist = append(c.hist, message{Role: "user", Content: turn.User})
	body := chatBody{Model: cp.body.Model, Messages: c.hist, MaxTokens: turn.MaxTokens,
		IgnoreEOS: cp.ignoreEOS && turn.MaxTokens > 0, Stream: cp.body.Stream}
	if cp.body.Stream && cp.body.IncludeUsage {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(body)
	if err != nil {
		out.Err = err
		return
	}
	tr := out.Tokens
	if tr == nil {
		tr = &kinds.TokenTrace{}
		out.Tokens = tr
	}
	tr.KeepText, tr.Turn = true, r.Step.Index+1
	c.p.send(ctx, clock, b, out)
	if out.Err != nil {
		c.hist = c.hist[:len(c.hist)-1]
		return
	}
	c.hist = append(c.hist, message{Role: "assistant", Content: string(tr.Text)})
}

func (c *convCaller) Close() error { return nil }

// pause waits d unless ctx ends first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
