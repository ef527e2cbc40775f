package llmsim

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when the engine sleeps, so step times are exact
// and tests never wait on the wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) sleep(d time.Duration, quit <-chan struct{}) bool {
	c.mu.Lock()
	c.t = c.t.Add(max(d, 0))
	c.mu.Unlock()
	select {
	case <-quit:
		return false
	default:
		return true
	}
}

func newTestServer(t *testing.T, params map[string]map[string]string, key string) (*Server, *httptest.Server) {
	t.Helper()
	clk := &fakeClock{t: time.Unix(0, 0)}
	s, err := New(Options{Params: params, APIKey: key, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.engines {
		e.sleep = clk.sleep
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

func post(t *testing.T, url, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestStepTime(t *testing.T) {
	p := Params{PrefillBase: 2 * time.Millisecond, PrefillPerToken: 10 * time.Microsecond,
		DecodeBase: 8 * time.Millisecond, DecodePerSeq: 100 * time.Microsecond, DecodeSlowdown: 1}
	tests := []struct {
		name     string
		running  int
		admitted []int // input tokens of sequences prefilled in the step
		slowdown float64
		want     time.Duration
	}{
		{"one sequence decoding", 1, nil, 1, 8100 * time.Microsecond},
		{"64 sequences: the step grows with the batch", 64, nil, 1, 14400 * time.Microsecond},
		{"a 100-token prefill joins", 2, []int{100}, 1, 8200*time.Microsecond + 3*time.Millisecond},
		{"two prefills", 2, []int{100, 300}, 1, 8200*time.Microsecond + 2*time.Millisecond + 1*time.Millisecond + 2*time.Millisecond + 3*time.Millisecond},
		{"decode slowed 10%", 10, nil, 1.1, 9900 * time.Microsecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			q.DecodeSlowdown = tc.slowdown
			var adm []*seq
			for _, n := range tc.admitted {
				adm = append(adm, newSeq(n, 1, 0))
			}
			if got := stepTime(&q, tc.running, adm); got != tc.want {
				t.Errorf("stepTime = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParams(t *testing.T) {
	if _, err := ParseParams("llm", map[string]string{"decode_slowdown": "1.1", "usage": "false"}); err != nil {
		t.Fatal(err)
	}
	bad := []struct{ model, key, val, want string }{
		{"nope", "seed", "1", `unknown LLM model "nope"`},
		{"llm", "decode_slowdown", "0", "not a factor"},
		{"llm", "bogus", "1", "unknown parameter (known: chunk_tokens"},
		{"llm", "error_rate", "2", "not a fraction"},
		{"llm", "decode_base", "-1ms", "not in [0, 1m]"},
		{"llm", "stall_for", "2s", "must be shorter than stall_every"},
	}
	for _, b := range bad {
		kv := map[string]string{b.key: b.val}
		if b.key == "stall_for" {
			kv["stall_every"] = "1s"
		}
		_, err := ParseParams(b.model, kv)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s.%s=%s: err = %v, want it to contain %q", b.model, b.key, b.val, err, b.want)
		}
	}
}

// events splits an SSE body into its data payloads.
func events(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestChatStream(t *testing.T) {
	_, ts := newTestServer(t, nil, "")
	body := `{"model":"llm","messages":[{"role":"user","content":"one two three four"}],"max_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	resp, out := post(t, ts.URL+"/v1/chat/completions", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
	}
	ev := events(t, out)
	// role chunk, 5 content chunks, finish chunk, usage chunk, [DONE]
	if len(ev) != 9 || ev[8] != "[DONE]" {
		t.Fatalf("got %d events:\n%s", len(ev), out)
	}
	var text string
	for _, e := range ev[1:6] {
		var c struct {
			Object  string
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil || c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("chunk %s: %v", e, err)
		}
		if strings.Count(c.Choices[0].Delta.Content, " ") != 1 {
			t.Errorf("chunk %q: want one token", c.Choices[0].Delta.Content)
		}
		text += c.Choices[0].Delta.Content
	}
	if !strings.Contains(ev[6], `"finish_reason":"length"`) {
		t.Errorf("finish chunk: %s", ev[6])
	}
	var u struct{ Choices []any }
	if err := json.Unmarshal([]byte(ev[7]), &u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ev[7], `"prompt_tokens":4,"completion_tokens":5,"total_tokens":9`) || len(u.Choices) != 0 {
		t.Errorf("usage chunk: %s", ev[7])
	}
	// The same prompt gives the same tokens, streamed or not.
	_, whole := post(t, ts.URL+"/v1/chat/completions", strings.Replace(body, `"stream":true`, `"stream":false`, 1))
	var w struct {
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(whole), &w); err != nil || len(w.Choices) != 1 {
		t.Fatalf("non-stream reply %s: %v", whole, err)
	}
	if w.Choices[0].Message.Content != text || w.Choices[0].FinishReason != "length" {
		t.Errorf("non-stream content %q (%s), streamed %q", w.Choices[0].Message.Content, w.Choices[0].FinishReason, text)
	}
	if !strings.Contains(whole, `"completion_tokens":5`) {
		t.Errorf("non-stream usage missing: %s", whole)
	}
}

func TestCompletionStreamChunksAndNoUsage(t *testing.T) {
	_, ts := newTestServer(t, map[string]map[string]string{"llm": {"chunk_tokens": "3", "usage": "false"}}, "")
	body := `{"model":"llm","prompt":"a b","max_tokens":7,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	_, out := post(t, ts.URL+"/v1/completions", body)
	ev := events(t, out)
	// 7 tokens in chunks of at most 3: at least 3 chunks, a finish chunk, [DONE]; no usage.
	if ev[len(ev)-1] != "[DONE]" || strings.Contains(out, "usage") {
		t.Fatalf("stream:\n%s", out)
	}
	tokens := 0
	for _, e := range ev[:len(ev)-2] {
		var c struct {
			Object  string
			Choices []struct{ Text string }
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil || c.Object != "text_completion" {
			t.Fatalf("chunk %s: %v", e, err)
		}
		n := strings.Count(c.Choices[0].Text, " ")
		if n < 1 || n > 3 {
			t.Errorf("chunk %q has %d tokens", c.Choices[0].Text, n)
		}
		tokens += n
	}
	if tokens != 7 {
		t.Errorf("streamed %d tokens, want 7", tokens)
	}
}

func TestEOSShortensOutputDeterministically(t *testing.T) {
	_, ts := newTestServer(t, nil, "")
	body := `{"model":"llm","prompt":"hello world","max_tokens":40}`
	_, a := post(t, ts.URL+"/v1/completions", body)
	_, b := post(t, ts.URL+"/v1/completions", body)
	if strings.Replace(a, "cmpl-1", "cmpl-2", 1) != b {
		t.Errorf("same prompt, different replies:\n%s\n%s", a, b)
	}
	var r struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(a), &r); err != nil {
		t.Fatal(err)
	}
	if n := r.Usage.CompletionTokens; n < 21 || n > 40 || (n < 40) != (r.Choices[0].FinishReason == "stop") {
		t.Errorf("without ignore_eos: %d tokens, finish %q", n, r.Choices[0].FinishReason)
	}
}

func TestFaultsAndBadRequests(t *testing.T) {
	_, ts := newTestServer(t, map[string]map[string]string{"llm": {"error_rate": "1"}, "llm_fp8": {"midstream_error_rate": "1"}}, "sekret")
	auth := []string{"Authorization", "Bearer sekret"}
	tests := []struct {
		name, path, body string
		hdr              []string
		status           int
		want             string
	}{
		{"no key", "/v1/completions", `{}`, nil, 401, "API key"},
		{"bad json", "/v1/completions", `{`, auth, 400, "request body"},
		{"unknown model", "/v1/completions", `{"model":"x","prompt":"a"}`, auth, 404, `the model \"x\" does not exist`},
		{"no prompt", "/v1/completions", `{"model":"llm_fp8"}`, auth, 400, "prompt: required"},
		{"no messages", "/v1/chat/completions", `{"model":"llm_fp8"}`, auth, 400, "at least one message"},
		{"zero max_tokens", "/v1/completions", `{"model":"llm_fp8","prompt":"a","max_tokens":0}`, auth, 400, "max_tokens"},
		{"injected 500", "/v1/completions", `{"model":"llm","prompt":"a"}`, auth, 500, "injected engine failure"},
		{"mid-stream error", "/v1/completions", `{"model":"llm_fp8","prompt":"a","max_tokens":8,"stream":true}`, auth, 200, `data: {"error":{"message":"injected engine failure during decode"`},
		{"unknown path", "/v1/rerank", `{}`, auth, 404, "no such endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := post(t, ts.URL+tc.path, tc.body, tc.hdr...)
			if resp.StatusCode != tc.status || !strings.Contains(out, tc.want) {
				t.Errorf("status %d, body %s; want %d containing %q", resp.StatusCode, out, tc.status, tc.want)
			}
			if tc.status == 200 && strings.Contains(out, "[DONE]") {
				t.Errorf("a failed stream must not end with [DONE]:\n%s", out)
			}
		})
	}
}

func TestModelsList(t *testing.T) {
	_, ts := newTestServer(t, nil, "")
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Data) != 2 || l.Data[0].ID != "llm" {
		t.Fatalf("models: %+v %v", l, err)
	}
}
