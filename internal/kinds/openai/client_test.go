package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/transport"
)

// step is one piece of a scripted reply: the clock moves by after, then
// the bytes arrive.
type step struct {
	after time.Duration
	data  string
}

// script plays a reply on a fake clock, so token times are exact.
type script struct {
	clock  *time.Time
	status int
	ctype  string
	steps  []step
	err    error // returned after the steps instead of io.EOF
}

func (s *script) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: s.status, Header: http.Header{"Content-Type": {s.ctype}},
		Body: &scriptBody{s: s}}, nil
}

type scriptBody struct {
	s *script
	i int
}

func (b *scriptBody) Read(p []byte) (int, error) {
	if b.i >= len(b.s.steps) {
		if b.s.err != nil {
			return 0, b.s.err
		}
		return 0, io.EOF
	}
	st := &b.s.steps[b.i]
	*b.s.clock = b.s.clock.Add(st.after)
	st.after = 0
	n := copy(p, st.data)
	st.data = st.data[n:]
	if st.data == "" {
		b.i++
	}
	return n, nil
}

func (b *scriptBody) Close() error { return nil }

func scripted(t *testing.T, s *script, opts Options) *Client {
	t.Helper()
	clock := time.Unix(0, 0)
	s.clock = &clock
	if s.status == 0 {
		s.status = 200
	}
	if s.ctype == "" {
		s.ctype = "text/event-stream"
	}
	if opts.Endpoint == "" {
		opts.Endpoint = EndpointChat
	}
	opts.URL = "http://example.invalid"
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c.hc.Transport = s
	c.now = func() time.Time { return *s.clock }
	return c
}

func chat(content string) string {
	return `data: {"choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n"
}

const (
	roleChunk   = `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
	finishChunk = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n"
	done        = "data: [DONE]\n\n"
	ms          = time.Millisecond
)

func TestGenerateTimesTokens(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		ctype  string
		steps  []step
		want   kinds.TokenTrace
		errSub string
	}{
		{name: "role chunk, three tokens, usage",
			steps: []step{{5 * ms, roleChunk}, {100 * ms, chat(" a")}, {20 * ms, chat(" b")}, {30 * ms, ": keep-alive\n\n" + chat(" c")},
				{1 * ms, finishChunk}, {0, `data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}` + "\n\n"}, {0, done}},
			// TTFT counts to the first non-empty content (105 ms), not the role chunk.
			want: kinds.TokenTrace{Streamed: true, FirstToken: 105 * ms, Last: 155 * ms, Gaps: []time.Duration{20 * ms, 30 * ms},
				Chunks: 3, OutputTokens: 3, InputTokens: 7, FromUsage: true}},
		{name: "no usage: tokens are counted chunks",
			steps: []step{{10 * ms, chat("x")}, {10 * ms, chat("y")}, {0, done}},
			want:  kinds.TokenTrace{Streamed: true, FirstToken: 10 * ms, Last: 20 * ms, Gaps: []time.Duration{10 * ms}, Chunks: 2, OutputTokens: 2}},
		{name: "multi-token chunks: usage says more tokens than chunks",
			steps: []step{{10 * ms, chat("x y")}, {30 * ms, chat("z w")}, {0, `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4}}` + "\n\n" + done}},
			want: kinds.TokenTrace{Streamed: true, FirstToken: 10 * ms, Last: 40 * ms, Gaps: []time.Duration{30 * ms}, Chunks: 2,
				OutputTokens: 4, InputTokens: 1, FromUsage: true}},
		{name: "completions text chunks, CRLF",
			opts:  Options{Endpoint: EndpointCompletions},
			steps: []step{{3 * ms, "data: {\"choices\":[{\"text\":\" a\"}]}\r\n\r\n"}, {4 * ms, "data: {\"choices\":[{\"text\":\" b\"}]}\r\n\r\n"}, {0, "data: [DONE]\r\n\r\n"}},
			want:  kinds.TokenTrace{Streamed: true, FirstToken: 3 * ms, Last: 7 * ms, Gaps: []time.Duration{4 * ms}, Chunks: 2, OutputTokens: 2}},
		{name: "not streamed", ctype: "application/json",
			steps: []step{{50 * ms, `{"choices":[{"message":{"role":"assistant","content":"a b c"}}],"usage":{"prompt_tokens":2,"completion_tokens":3}}`}},
			want:  kinds.TokenTrace{Chunks: 1, OutputTokens: 3, InputTokens: 2, FromUsage: true}},
		{name: "require usage", opts: Options{RequireUsage: true},
			steps:  []step{{1 * ms, chat("x")}, {0, done}},
			errSub: "the reply carried no usage"},
		{name: "no [DONE]", steps: []step{{1 * ms, chat("x")}},
			errSub: "the stream ended without [DONE] after 1 content chunks"},
		{name: "cut inside an event", steps: []step{{1 * ms, chat("x")}, {1 * ms, `data: {"choices":[{"delta":{"con`}},
			errSub: "cut inside an event after 1 content chunks"},
		{name: "malformed JSON", steps: []step{{1 * ms, chat("x")}, {0, "data: {nope}\n\n"}},
			errSub: "event 2 is not a JSON chunk"},
		{name: "vLLM error object mid-stream", steps: []step{{1 * ms, chat("x")}, {0, `data: {"error":{"message":"CUDA out of memory","code":500}}` + "\n\n"}},
			errSub: "error event after 1 content chunks: CUDA out of memory"},
		{name: "error event type", steps: []step{{1 * ms, chat("x")}, {1 * ms, chat("y")}, {0, "event: error\ndata: {\"message\":\"overloaded\"}\n\n"}},
			errSub: "error event after 2 content chunks: overloaded"},
		{name: "empty stream", steps: []step{{1 * ms, roleChunk + done}},
			errSub: "carried no content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := scripted(t, &script{steps: tc.steps, ctype: tc.ctype}, tc.opts)
			var tr kinds.TokenTrace
			err := c.Generate(context.Background(), []byte(`{}`), &tr)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tr); diff != "" {
				t.Errorf("trace (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateHTTPErrors(t *testing.T) {
	c := scripted(t, &script{status: 500, ctype: "application/json",
		steps: []step{{0, `{"error":{"message":"injected engine failure","type":"InternalServerError","code":500}}`}}}, Options{})
	var tr kinds.TokenTrace
	err := c.Generate(context.Background(), nil, &tr)
	var se *transport.ServerError
	if !errors.As(err, &se) || se.HTTPStatus != 500 || !strings.Contains(err.Error(), "injected engine failure") {
		t.Fatalf("err = %v", err)
	}
	boom := errors.New("connection reset by peer")
	c = scripted(t, &script{steps: []step{{1 * ms, chat("x")}}, err: boom}, Options{})
	err = c.Generate(context.Background(), nil, &tr)
	if !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, boom) || !strings.Contains(err.Error(), "after 1 content chunks") {
		t.Fatalf("err = %v", err)
	}
}

func TestEndpointChecked(t *testing.T) {
	if _, err := New(Options{URL: "x", Endpoint: "v1/rerank"}); err == nil {
		t.Fatal("accepted v1/rerank")
	}
}

func FuzzGenerateStream(f *testing.F) {
	f.Add(roleChunk + chat(" a") + chat(" b") + finishChunk + done)
	f.Add(chat("x") + `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":9}}` + "\n\n" + done)
	f.Add("event: error\ndata: {\"error\":\"x\"}\n\n")
	f.Add(chat("x") + "data: {\n\n")
	f.Fuzz(func(t *testing.T, body string) {
		c := scripted(t, &script{steps: []step{{ms, body}}}, Options{})
		var tr kinds.TokenTrace
		if err := c.Generate(context.Background(), nil, &tr); err != nil {
			return
		}
		if tr.Chunks < 1 || len(tr.Gaps) != tr.Chunks-1 || tr.FirstToken > tr.Last {
			t.Fatalf("accepted stream gave an inconsistent trace %+v", tr)
		}
		if !tr.FromUsage && tr.OutputTokens != tr.Chunks {
			t.Fatalf("without usage, tokens %d != chunks %d", tr.OutputTokens, tr.Chunks)
		}
	})
}

// The LLM client never goes through a proxy, as the inference clients do
// not: HTTP_PROXY set in a CI environment would silently measure the
// proxy instead of the server. (The variable itself cannot drive this
// test: net/http reads the environment once per process.)
func TestClientIgnoresProxyVariables(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	for _, opts := range []Options{
		{URL: "http://llm.invalid:8000", Endpoint: EndpointChat},
		{URL: "https://llm.invalid:8443", Endpoint: EndpointCompletions, MaxConns: 4},
	} {
		c, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := c.hc.Transport.(*http.Transport)
		if !ok {
			t.Fatalf("%s: transport %T", opts.URL, c.hc.Transport)
		}
		if tr.Proxy != nil {
			req, _ := http.NewRequest(http.MethodPost, opts.URL, nil)
			u, _ := tr.Proxy(req)
			t.Errorf("%s: the client has a proxy function (it would send to %v)", opts.URL, u)
		}
	}
}
