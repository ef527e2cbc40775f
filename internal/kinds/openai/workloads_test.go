package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
	"github.com/perfscen/perfscen/internal/llmtrace"
)

type chatReq struct {
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Prompt    string   `json:"prompt"`
	Input     []string `json:"input"`
	MaxTokens int      `json:"max_tokens"`
	IgnoreEOS bool     `json:"ignore_eos"`
	Stream    bool     `json:"stream"`
}

func decode(t *testing.T, b []byte) chatReq {
	t.Helper()
	var r chatReq
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return r
}

// Equal hash_ids give equal blocks at the same place, whatever else the
// prompts hold; a prompt is input_length words; max_tokens is the
// output_length.
func TestTraceBodies(t *testing.T) {
	tr, err := llmtrace.Parse("t.jsonl", []byte(`{"timestamp": 0, "input_length": 20, "output_length": 5, "hash_ids": [7, 8, 9]}
{"timestamp": 10, "input_length": 14, "output_length": 3, "hash_ids": [7, 8]}
{"timestamp": 20, "input_length": 12, "output_length": 2, "hash_ids": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	bodies, err := TraceBodies(tr, TraceOptions{BlockSize: 8, Seed: 3, IgnoreEOS: true}, BodyOptions{Model: "m", Endpoint: EndpointCompletions})
	if err != nil {
		t.Fatal(err)
	}
	var words [][]string
	for i, b := range bodies {
		r := decode(t, b)
		words = append(words, strings.Fields(r.Prompt))
		if want := tr.Requests[i].Input; len(words[i]) != want {
			t.Errorf("request %d: %d words, want %d", i, len(words[i]), want)
		}
		if r.MaxTokens != tr.Requests[i].Output || !r.IgnoreEOS {
			t.Errorf("request %d: max_tokens %d ignore_eos %v", i, r.MaxTokens, r.IgnoreEOS)
		}
	}
	// Blocks 7 and 8 (16 words) are shared; request 1's 14 words are
	// block 7 and 6 words of block 8.
	if strings.Join(words[0][:14], " ") != strings.Join(words[1], " ") {
		t.Errorf("shared blocks differ:\n%v\n%v", words[0][:14], words[1])
	}
	if strings.Join(words[2][:8], " ") == strings.Join(words[0][:8], " ") {
		t.Error("block 1 equals block 7")
	}
	again, _ := TraceBodies(tr, TraceOptions{BlockSize: 8, Seed: 3, IgnoreEOS: true}, BodyOptions{Model: "m", Endpoint: EndpointCompletions})
	if string(again[2]) != string(bodies[2]) {
		t.Error("the same trace and seed gave other prompts")
	}
	chat, _ := TraceBodies(tr, TraceOptions{BlockSize: 8, Seed: 3}, BodyOptions{Model: "m", Endpoint: EndpointChat, Stream: true, IncludeUsage: true})
	if r := decode(t, chat[0]); len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.IgnoreEOS || !r.Stream {
		t.Errorf("chat body %s", chat[0])
	}
}

// Shared prefixes: request i starts with system prompt i mod count, the
// same words every time; the rest of each prompt is its own.
func TestSharedPrefixPrompts(t *testing.T) {
	bodies, err := Synthetic(Prompts{InputMean: 6, Count: 6, Seed: 1, SharedCount: 2, SharedTokens: 10}, BodyOptions{Model: "m", Endpoint: EndpointChat})
	if err != nil {
		t.Fatal(err)
	}
	sys := map[int]string{}
	for i, b := range bodies {
		r := decode(t, b)
		if len(r.Messages) != 2 || r.Messages[0].Role != "system" || len(strings.Fields(r.Messages[0].Content)) != 10 || len(strings.Fields(r.Messages[1].Content)) != 6 {
			t.Fatalf("request %d: %s", i, b)
		}
		if s, ok := sys[i%2]; ok && s != r.Messages[0].Content {
			t.Errorf("request %d: another system prompt than request %d", i, i%2)
		}
		sys[i%2] = r.Messages[0].Content
	}
	if sys[0] == sys[1] {
		t.Error("the two shared prompts are equal")
	}
	comp, _ := Synthetic(Prompts{InputMean: 6, Count: 2, Seed: 1, SharedCount: 1, SharedTokens: 4}, BodyOptions{Model: "m", Endpoint: EndpointCompletions})
	if r := decode(t, comp[1]); len(strings.Fields(r.Prompt)) != 10 {
		t.Errorf("completion prompt %q: want 4 shared and 6 own words", r.Prompt)
	}
	// Without a shared prefix the bodies are those of before.
	plain, _ := Synthetic(Prompts{InputMean: 6, Count: 2, Seed: 1}, BodyOptions{Model: "m", Endpoint: EndpointChat})
	if r := decode(t, plain[0]); len(r.Messages) != 1 {
		t.Errorf("plain body %s", plain[0])
	}
}

func TestEmbeddingBodies(t *testing.T) {
	bodies, err := Synthetic(Prompts{InputMean: 5, Count: 3, Seed: 1, Batch: 4}, BodyOptions{Model: "m", Endpoint: EndpointEmbeddings})
	if err != nil {
		t.Fatal(err)
	}
	r := decode(t, bodies[2])
	if len(r.Input) != 4 || len(strings.Fields(r.Input[3])) != 5 || strings.Contains(string(bodies[2]), "stream") {
		t.Errorf("embeddings body %s", bodies[2])
	}
}

func TestConversationScripts(t *testing.T) {
	cs, err := Conversations(ConversationOptions{Count: 3, Turns: 4, SystemTokens: 5, UserMean: 7, OutputMean: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || len(cs[1].Turns) != 4 || len(strings.Fields(cs[1].System)) != 5 || len(strings.Fields(cs[1].Turns[2].User)) != 7 || cs[1].Turns[2].MaxTokens != 3 {
		t.Errorf("scripts %+v", cs)
	}
	if cs[0].System == cs[1].System {
		t.Error("two conversations share a system prompt")
	}
	if _, err := Conversations(ConversationOptions{Count: 1, Turns: 0, UserMean: 1}); err == nil {
		t.Error("zero turns accepted")
	}
}

// A conversation's turns send the history back: turn k carries the
// system prompt, the k−1 earlier messages and replies (the replies as the
// server wrote them) and the new message; a new conversation starts over.
func TestConversationCallerSendsHistory(t *testing.T) {
	var seen [][]byte
	sim, err := llmsim.New(llmsim.Options{Params: map[string]map[string]string{"llm": {"decode_base": "0s", "decode_per_seq": "0s", "prefill_base": "0s", "prefill_per_token": "0s"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen = append(seen, b)
		r.Body = io.NopCloser(bytes.NewReader(b))
		sim.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := New(Options{URL: ts.URL, Endpoint: EndpointChat})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	scripts, _ := Conversations(ConversationOptions{Count: 2, Turns: 3, SystemTokens: 4, UserMean: 3, OutputMean: 2, Seed: 1})
	p := &point{client: c, data: conversationData(scripts),
		conv: &convPlan{scripts: scripts, ignoreEOS: true, body: BodyOptions{Model: "llm", Endpoint: EndpointChat, Stream: true, IncludeUsage: true}}}
	caller, _ := p.NewCaller(context.Background(), 0)
	clock := func() time.Duration { return 0 }
	cur := p.data.Cursor(0, 1)
	var replies []string
	for range 4 { // three turns of conversation 1, the first of conversation 2
		r := cur.Next()
		out := kinds.Outcome{}
		caller.Call(context.Background(), clock, &kinds.Request{Step: r}, &out)
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		if out.Tokens.Turn != r.Index+1 {
			t.Errorf("turn %d recorded as %d", r.Index+1, out.Tokens.Turn)
		}
		replies = append(replies, string(out.Tokens.Text))
	}
	last := decode(t, seen[2])
	if len(last.Messages) != 6 || last.Messages[0].Content != scripts[0].System || last.Messages[2].Role != "assistant" ||
		last.Messages[2].Content != replies[0] || last.Messages[4].Content != replies[1] || last.Messages[5].Content != scripts[0].Turns[2].User ||
		last.MaxTokens != 2 || !last.IgnoreEOS {
		t.Errorf("turn 3 sent %s", seen[2])
	}
	if first := decode(t, seen[3]); len(first.Messages) != 2 || first.Messages[0].Content != scripts[1].System {
		t.Errorf("a new conversation sent %s", seen[3])
	}
}

// A scaled trace keeps its sharing: prompts and blocks both shrink.
func TestScaledTraceBodies(t *testing.T) {
	tr, _ := llmtrace.Parse("t.jsonl", []byte(`{"timestamp": 0, "input_length": 64, "output_length": 5, "hash_ids": [7, 8]}
{"timestamp": 10, "input_length": 40, "output_length": 3, "hash_ids": [7, 9]}`))
	s, bs := tr.Scaled(0.25, 32)
	bodies, err := TraceBodies(s, TraceOptions{BlockSize: bs, Seed: 1}, BodyOptions{Model: "m", Endpoint: EndpointCompletions})
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Fields(decode(t, bodies[0]).Prompt), strings.Fields(decode(t, bodies[1]).Prompt)
	if len(a) != 16 || len(b) != 10 || strings.Join(a[:8], " ") != strings.Join(b[:8], " ") || strings.Join(a[8:10], " ") == strings.Join(b[8:10], " ") {
		t.Errorf("scaled prompts\n%v\n%v", a, b)
	}
}
