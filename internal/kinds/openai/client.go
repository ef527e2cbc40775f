package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/sse"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// Endpoints a scenario may name.
const (
	EndpointChat        = "v1/chat/completions"
	EndpointCompletions = "v1/completions"
	EndpointEmbeddings  = plan.EndpointEmbeddings
)

// Options configure a Client.
type Options struct {
	// URL is the server's base, e.g. http://127.0.0.1:8000; the endpoint
	// path is appended.
	URL      string
	Endpoint string // EndpointChat, EndpointCompletions or EndpointEmbeddings
	// APIKey is sent as "Authorization: Bearer"; "" sends none.
	APIKey  string
	Headers map[string]string
	TLS     *tls.Config
	// Timeout bounds a whole request, stream included; 0 means none.
	Timeout time.Duration
	// RequireUsage makes a reply without usage a failed request instead of
	// falling back to counting content chunks.
	RequireUsage bool
	// MaxConns caps connections per host; 0 means 1024.
	MaxConns int
	// Dial, when set, opens connections instead of TCP (tests carry them
	// in memory).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client talks to one OpenAI-compatible server: it generates, and lists the
// served models (which is also its readiness check).
type Client struct {
	opts    Options
	hc      *http.Client
	url     string
	models  string
	header  http.Header
	readers sync.Pool
	now     func() time.Time // the clock token times are read from
}

// New builds a client; it does not contact the server.
func New(opts Options) (*Client, error) {
	if opts.Endpoint != EndpointChat && opts.Endpoint != EndpointCompletions && opts.Endpoint != EndpointEmbeddings {
		return nil, fmt.Errorf("endpoint %q: want %s, %s or %s", opts.Endpoint, EndpointChat, EndpointCompletions, EndpointEmbeddings)
	}
	base := strings.TrimRight(opts.URL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		base = "http://" + base
	}
	conns := opts.MaxConns
	if conns <= 0 {
		conns = 1024
	}
	// The library transport set up for load, as the inference clients
	// use it: never through a proxy (HTTP_PROXY in a CI environment would
	// silently measure the proxy), no transparent compression (streams
	// are read as they arrive; a decompressor would hold chunks back).
	tr := transport.NewHTTPTransport(transport.HTTPTransportOptions{TLS: opts.TLS, Dial: opts.Dial, MaxConns: conns})
	c := &Client{opts: opts, hc: &http.Client{Transport: tr, Timeout: opts.Timeout},
		url: base + "/" + opts.Endpoint, models: base + "/v1/models", header: http.Header{}, now: time.Now}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", "text/event-stream, application/json")
	for k, v := range opts.Headers {
		c.header.Set(k, v)
	}
	if opts.APIKey != "" {
		c.header.Set("Authorization", "Bearer "+opts.APIKey)
	}
	return c, nil
}

// Generate sends body and reads the reply into t (which it resets first).
// A non-200 status, a transport failure, a malformed or cut stream, an
// error event, an empty reply, or (with RequireUsage) a missing usage is an
// error: the request failed.
func (c *Client) Generate(ctx context.Context, body []byte, t *kinds.TokenTrace) error {
	t.Reset()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openai: building request: %w", err)
	}
	req.Header = c.header // shared and read-only: the transport does not modify it
	start := c.now()
	// The time until the request is written is the client's; the rest,
	// until the reply's last chunk, is waiting for the server.
	var written atomic.Int64 // set on the transport's goroutine
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { written.Store(int64(c.now().Sub(start))) },
	}))
	resp, err := c.hc.Do(req)
	t.Written = time.Duration(written.Load())
	if err != nil {
		return &transport.TransportError{Protocol: "openai", Op: c.opts.Endpoint, Err: err}
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return c.statusError(resp)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = c.readStream(resp.Body, start, t)
	} else {
		err = c.readWhole(resp.Body, start, t)
	}
	if err != nil {
		return err
	}
	if t.FromUsage || c.opts.Endpoint == EndpointEmbeddings {
		return nil
	}
	if c.opts.RequireUsage {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint,
			Err: errors.New("the reply carried no usage (token_count: usage); streaming servers send it only with stream_options.include_usage")}
	}
	t.OutputTokens = t.Chunks
	return nil
}

func (c *Client) statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	msg := errorMessage(b)
	if msg == "" {
		msg = strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	return &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: c.opts.Endpoint, HTTPStatus: resp.StatusCode, Message: msg}
}

// errorMessage extracts an OpenAI error object's message ("" if none):
// {"error": {"message": ...}} or {"error": "..."} or {"message": ...}.
func errorMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	if len(e.Error) > 0 && json.Unmarshal(e.Error, &s) == nil {
		return s
	}
	return e.Message
}

func (c *Client) reader(r io.Reader) *sse.Reader {
	if v := c.readers.Get(); v != nil {
		rd := v.(*sse.Reader)
		rd.Reset(r)
		return rd
	}
	return sse.NewReader(r)
}

var doneMarker = []byte("[DONE]")

func (c *Client) readStream(body io.Reader, start time.Time, t *kinds.TokenTrace) error {
	t.Streamed = true
	rd := c.reader(body)
	defer c.readers.Put(rd)
	var ch chunk
	for n := 0; ; n++ {
		ev, err := rd.Next()
		if err != nil {
			return c.streamError(err, t)
		}
		if string(ev.Type) == "error" {
			return c.midStream(t, ev.Data)
		}
		now := c.now().Sub(start)
		if t.Capture {
			t.Events = append(t.Events, kinds.ResponseEvent{At: now, Data: bytes.Clone(ev.Data)})
		}
		if bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
			break
		}
		ch.reset()
		if err := json.Unmarshal(ev.Data, &ch); err != nil {
			return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint,
				Err: fmt.Errorf("event %d is not a JSON chunk (%v): %s", n+1, err, clip(ev.Data))}
		}
		if ch.Error != nil {
			return c.midStream(t, ev.Data)
		}
		if ch.Usage != nil {
			t.FromUsage = true
			t.OutputTokens, t.InputTokens = ch.Usage.CompletionTokens, ch.Usage.PromptTokens
		}
		if !ch.hasContent() {
			continue
		}
		if t.KeepText {
			t.Text = ch.appendText(t.Text)
		}
		if t.Chunks == 0 {
			t.FirstToken = now
		} else {
			t.Gaps = append(t.Gaps, now-t.Last)
		}
		t.Last = now
		t.Chunks++
	}
	if t.Chunks == 0 {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: errors.New("the stream ended with [DONE] but carried no content")}
	}
	return nil
}

func (c *Client) midStream(t *kinds.TokenTrace, data []byte) error {
	msg := errorMessage(data)
	if msg == "" {
		msg = clip(data)
	}
	return &transport.ServerError{Protocol: plan.ProtocolHTTP, Op: c.opts.Endpoint, HTTPStatus: http.StatusOK,
		Message: fmt.Sprintf("error event after %d content chunks: %s", t.Chunks, msg)}
}

func (c *Client) streamError(err error, t *kinds.TokenTrace) error {
	switch {
	case errors.Is(err, io.EOF):
		err = fmt.Errorf("the stream ended without [DONE] after %d content chunks", t.Chunks)
	case errors.Is(err, sse.ErrTruncated):
		err = fmt.Errorf("the stream was cut inside an event after %d content chunks", t.Chunks)
	case errors.Is(err, sse.ErrLineTooLong):
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: err}
	default:
		return &transport.TransportError{Protocol: "openai", Op: c.opts.Endpoint,
			Err: fmt.Errorf("reading the stream after %d content chunks: %w", t.Chunks, err)}
	}
	return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: err}
}

func (c *Client) readWhole(body io.Reader, start time.Time, t *kinds.TokenTrace) error {
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		return &transport.TransportError{Protocol: "openai", Op: c.opts.Endpoint, Err: fmt.Errorf("reading the reply: %w", err)}
	}
	if t.Capture {
		t.Events = append(t.Events, kinds.ResponseEvent{At: c.now().Sub(start), Data: b})
	}
	if c.opts.Endpoint == EndpointEmbeddings {
		return c.readEmbeddings(b, t)
	}
	var ch chunk
	if err := json.Unmarshal(b, &ch); err != nil {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: fmt.Errorf("the reply is not JSON (%v): %s", err, clip(b))}
	}
	if ch.Error != nil {
		return c.midStream(t, b)
	}
	if t.KeepText {
		t.Text = ch.appendText(t.Text)
	}
	if !ch.hasContent() {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: errors.New("the reply carried no content")}
	}
	t.Chunks = 1
	if ch.Usage != nil {
		t.FromUsage = true
		t.OutputTokens, t.InputTokens = ch.Usage.CompletionTokens, ch.Usage.PromptTokens
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 120 {
		return fmt.Sprintf("%q…", b[:120])
	}
	return fmt.Sprintf("%q", b)
}

// chunk is the part of a completion (chunk) the client reads.
type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// Deltas are values, not pointers: one allocation fewer per chunk.
type choice struct {
	Text    string `json:"text"`
	Delta   delta  `json:"delta"`
	Message delta  `json:"message"`
}

type delta struct {
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// reset zeroes the chunk: json.Unmarshal merges into existing slice
// elements, so a field absent from this chunk would keep the last one's.
func (c *chunk) reset() {
	clear(c.Choices[:cap(c.Choices)])
	c.Choices = c.Choices[:0]
	c.Usage = nil
	c.Error = nil
}

// appendText adds the chunk's reply text (not its reasoning, which a
// conversation does not send back) to b.
func (c *chunk) appendText(b []byte) []byte {
	for _, ch := range c.Choices {
		b = append(b, ch.Text...)
		b = append(b, ch.Delta.Content...)
		b = append(b, ch.Message.Content...)
	}
	return b
}

// hasContent: output is text, delta content or reasoning (a reasoning
// model's thinking tokens are output tokens too).
func (c *chunk) hasContent() bool {
	for _, ch := range c.Choices {
		if ch.Text != "" {
			return true
		}
		if ch.Delta.Content != "" || ch.Delta.ReasoningContent != "" || ch.Message.Content != "" || ch.Message.ReasoningContent != "" {
			return true
		}
	}
	return false
}

// Model list, liveness and metadata.

func (c *Client) listModels(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.models, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &transport.TransportError{Protocol: "openai", Op: "list models", Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := c.statusError(resp)
		e.(*transport.ServerError).Op = "v1/models"
		return nil, e
	}
	var l struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&l); err != nil {
		return nil, &transport.ProtocolError{Protocol: "openai", Op: "v1/models", Err: err}
	}
	ids := make([]string, 0, len(l.Data))
	for _, m := range l.Data {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids, nil
}

// Ready is true when /v1/models answers: the API has no separate
// readiness.
func (c *Client) Ready(ctx context.Context) (bool, error) {
	_, err := c.listModels(ctx)
	var se *transport.ServerError
	if errors.As(err, &se) {
		return false, nil
	}
	return err == nil, err
}

// Models lists the model ids the server serves.
func (c *Client) Models(ctx context.Context) ([]string, error) { return c.listModels(ctx) }

// Close releases idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// readEmbeddings reads an embeddings reply: one vector per input, in
// order, and usage. Chunks counts the vectors; nothing is generated, so
// there are no output tokens.
func (c *Client) readEmbeddings(b []byte, t *kinds.TokenTrace) error {
	var r struct {
		Data []struct {
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage *usage          `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: fmt.Errorf("the reply is not JSON (%v): %s", err, clip(b))}
	}
	if r.Error != nil {
		return c.midStream(t, b)
	}
	for i, d := range r.Data {
		if len(d.Embedding) == 0 || string(d.Embedding) == "null" {
			return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: fmt.Errorf("data[%d] carries no embedding", i)}
		}
	}
	if len(r.Data) == 0 {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: errors.New("the reply carried no embeddings")}
	}
	t.Chunks = len(r.Data)
	if r.Usage != nil {
		t.FromUsage = true
		t.InputTokens = r.Usage.PromptTokens
	} else if c.opts.RequireUsage {
		return &transport.ProtocolError{Protocol: "openai", Op: c.opts.Endpoint, Err: errors.New("the reply carried no usage (token_count: usage)")}
	}
	return nil
}
