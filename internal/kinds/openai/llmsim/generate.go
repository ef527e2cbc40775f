package llmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxBody bounds a request body: prompts are text, not tensors.
const maxBody = 16 << 20

// request is the part of an OpenAI request the simulation reads.
type request struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []message       `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// texts returns the prompt strings: a completion prompt is a string or a
// list of strings; a chat message's content is a string or a list of
// {"type":"text","text":...} parts.
func (rq *request) texts(chat bool) ([]string, error) {
	if chat {
		if len(rq.Messages) == 0 {
			return nil, errors.New("messages: at least one message is required")
		}
		var out []string
		for i, m := range rq.Messages {
			var s string
			if err := json.Unmarshal(m.Content, &s); err == nil {
				out = append(out, s)
				continue
			}
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return nil, fmt.Errorf("messages[%d].content: not a string or a list of text parts", i)
			}
			for _, p := range parts {
				out = append(out, p.Text)
			}
		}
		return out, nil
	}
	if len(rq.Prompt) == 0 {
		return nil, errors.New("prompt: required")
	}
	var s string
	if err := json.Unmarshal(rq.Prompt, &s); err == nil {
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(rq.Prompt, &list); err == nil && len(list) == 1 {
		return list, nil
	}
	return nil, errors.New("prompt: a string (or a list of one string) is required")
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error())
		return
	}
	if len(body) > maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body over 16 MiB")
		return
	}
	var rq request
	if err := json.Unmarshal(body, &rq); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "request body: "+err.Error())
		return
	}
	e, ok := s.engines[rq.Model]
	if !ok {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("the model %q does not exist", rq.Model))
		return
	}
	texts, err := rq.texts(chat)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	p := e.params.Load()
	limit := p.DefaultMaxTokens
	for _, v := range []*int{rq.MaxTokens, rq.MaxCompletionTokens} {
		if v != nil {
			if *v < 1 {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "max_tokens must be at least 1")
				return
			}
			limit = *v
		}
	}
	h := promptHash(p.Seed, texts)
	n, reason := limit, "length"
	if !rq.IgnoreEOS {
		// The simulated model reaches its end-of-sequence token at a
		// prompt-determined point in the second half of the budget.
		if eos := limit/2 + 1 + int(h%uint64(limit-limit/2)); eos < limit {
			n, reason = eos, "stop"
		}
	}
	if p.ErrorRate > 0 && s.draw() < p.ErrorRate {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "injected engine failure")
		return
	}
	failAt := 0
	if p.MidstreamErrors > 0 && s.draw() < p.MidstreamErrors && n > 1 {
		failAt = 1 + int(h%uint64(n-1))
	}
	tokens := promptTokens(texts)
	sq := newSeq(len(tokens), n, failAt)
	sq.tokens, sq.hash = tokens, h
	ctx := r.Context()
	defer sq.cancelled.Store(true)
	select {
	case e.submit <- sq:
	case <-ctx.Done():
		return
	case <-e.quit:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "server shutting down")
		return
	}
	g := &gen{s: s, w: w, sq: sq, chat: chat, model: rq.Model, hash: h, chunk: p.ChunkTokens,
		usage: p.Usage, reason: reason, id: strconv.FormatUint(s.ids.Add(1), 10)}
	if rq.Stream {
		g.includeUsage = rq.StreamOptions != nil && rq.StreamOptions.IncludeUsage && p.Usage
		g.stream(r, e)
		return
	}
	g.whole(r, e)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errDisconnected ends a generation whose client went away.
var errDisconnected = errors.New("client disconnected")

// gen writes one generation's reply.
type gen struct {
	s            *Server
	w            http.ResponseWriter
	sq           *seq
	chat         bool
	model, id    string
	hash         uint64
	chunk        int
	usage        bool
	includeUsage bool
	reason       string
	buf          []byte
}

// wait blocks until the engine emitted more tokens, the sequence ended,
// the client left or the engine stopped.
func (g *gen) wait(r *http.Request, e *engine) error {
	select {
	case <-g.sq.notify:
		return nil
	case <-r.Context().Done():
		return errDisconnected
	case <-e.quit:
		return errors.New("server shutting down")
	}
}

func (g *gen) whole(r *http.Request, e *engine) {
	for !g.sq.finished.Load() {
		if err := g.wait(r, e); err != nil {
			if err != errDisconnected {
				writeError(g.w, http.StatusServiceUnavailable, "ServiceUnavailableError", err.Error())
			}
			return
		}
	}
	if g.sq.failed.Load() {
		writeError(g.w, http.StatusInternalServerError, "InternalServerError", "injected engine failure during decode")
		return
	}
	var text strings.Builder
	for i := 0; i < g.sq.maxTokens; i++ {
		text.WriteString(tokenText(g.hash, i))
	}
	content, _ := json.Marshal(text.String())
	b := g.head(nil, false)
	if g.chat {
		b = fmt.Appendf(b, `"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":%q}]`, content, g.reason)
	} else {
		b = fmt.Appendf(b, `"choices":[{"index":0,"text":%s,"finish_reason":%q}]`, content, g.reason)
	}
	if g.usage {
		b = g.appendUsage(append(b, ','))
	}
	b = append(b, '}')
	g.w.Header().Set("Content-Type", "application/json")
	_, _ = g.w.Write(b)
}

func (g *gen) head(b []byte, chunk bool) []byte {
	obj := "chat.completion"
	if !g.chat {
		obj = "text_completion"
	} else if chunk {
		obj = "chat.completion.chunk"
	}
	b = append(b, `{"id":"cmpl-`...)
	b = append(b, g.id...)
	b = append(b, `","object":"`...)
	b = append(b, obj...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, g.s.created, 10)
	b = append(b, `,"model":`...)
	b = strconv.AppendQuote(b, g.model)
	return append(b, ',')
}

func (g *gen) appendUsage(b []byte) []byte {
	in, out := int64(g.sq.input), g.sq.emitted.Load()
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, in, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, out, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, in+out, 10)
	return append(b, '}')
}
