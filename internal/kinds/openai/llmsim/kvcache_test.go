package llmsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/prom"
)

// clockedServer is newTestServer whose fake clock the test can read.
func clockedServer(t *testing.T, params map[string]map[string]string) (*fakeClock, string) {
	t.Helper()
	s, ts := newTestServer(t, params, "")
	clk := &fakeClock{t: time.Unix(0, 0)}
	for _, e := range s.engines {
		e.now, e.sleep = clk.now, clk.sleep
	}
	return clk, ts.URL
}

func wordList(prefix string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(w, " ")
}

// timed sends a one-token completion and returns the engine time it took
// and the reply's text.
func timed(t *testing.T, clk *fakeClock, url, prompt string, maxTokens int) (time.Duration, string) {
	t.Helper()
	before := clk.now()
	body, _ := json.Marshal(map[string]any{"model": "llm", "prompt": prompt, "max_tokens": maxTokens, "ignore_eos": true})
	resp, b := post(t, url+"/v1/completions", string(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(b), &r); err != nil || len(r.Choices) != 1 {
		t.Fatalf("reply %s: %v", b, err)
	}
	return clk.now().Sub(before), r.Choices[0].Text
}

func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	list, err := prom.Parse(resp.Body, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range list {
		if s.Labels["model_name"] == "llm" {
			out[s.Name] = s.Value
		}
	}
	return out
}

func TestPrefixCache(t *testing.T) {
	// Step: 8ms + 80µs decode, 2ms + 20µs per uncached prompt token.
	const step = 8080*time.Microsecond + 2*time.Millisecond
	tests := []struct {
		name        string
		cache       string
		first, then time.Duration
		hits        float64
	}{
		// 160 tokens are 10 blocks of 16; the repeat finds all of them
		// and computes only the last token.
		{"on: a repeated prompt prefills one token", "on", step + 160*20*time.Microsecond, step + 20*time.Microsecond, 159},
		{"off: every prompt prefills whole", "off", step + 160*20*time.Microsecond, step + 160*20*time.Microsecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk, url := clockedServer(t, map[string]map[string]string{"llm": {ParamPrefixCache: tt.cache}})
			p := wordList("w", 160)
			if d, _ := timed(t, clk, url, p, 1); d != tt.first {
				t.Errorf("first request took %v, want %v", d, tt.first)
			}
			if d, _ := timed(t, clk, url, p, 1); d != tt.then {
				t.Errorf("repeated request took %v, want %v", d, tt.then)
			}
			m := scrape(t, url)
			if m[MetricPrefixQueries] != 320 || m[MetricPrefixHits] != tt.hits {
				t.Errorf("queries %v hits %v, want 320 and %v", m[MetricPrefixQueries], m[MetricPrefixHits], tt.hits)
			}
		})
	}
}

func TestPrefixCacheKeepsReplies(t *testing.T) {
	// A conversation's next turn sends the prompt and the reply back: both
	// were cached, so only the new message (and the partial last block)
	// is prefilled.
	clk, url := clockedServer(t, nil)
	p := wordList("w", 64)
	_, reply := timed(t, clk, url, p, 32)
	next := p + reply + " " + wordList("x", 16)
	before := scrape(t, url)
	timed(t, clk, url, next, 1)
	after := scrape(t, url)
	// 64 + 32 = 96 tokens are 6 full blocks, all cached.
	if got := after[MetricPrefixHits] - before[MetricPrefixHits]; got != 96 {
		t.Errorf("the next turn hit %v cached tokens, want 96", got)
	}
}

func TestPrefixCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newKVCache(2, 3)
	a := blockHashes([]string{"a", "b", "c", "d"}, 2) // 2 blocks
	b := blockHashes([]string{"x", "y", "z", "w"}, 2)
	c.insert(a)
	if n := c.lookup(a); n != 2 {
		t.Fatalf("lookup after insert: %d blocks, want 2", n)
	}
	c.insert(b) // 4 blocks in a cache of 3: a's first block goes
	if n := c.lookup(a); n != 0 {
		t.Errorf("evicted prefix still found (%d blocks)", n)
	}
	if n := c.lookup(b); n != 2 {
		t.Errorf("recent prefix: %d blocks, want 2", n)
	}
	// Equal blocks behind different prefixes are different blocks.
	if blockHashes([]string{"q", "q", "c", "d"}, 2)[1] == a[1] {
		t.Error("a block's hash ignores what precedes it")
	}
}

func TestMetricsGauges(t *testing.T) {
	s, ts := newTestServer(t, map[string]map[string]string{"llm": {ParamKVCacheBlocks: "100"}}, "key")
	// /metrics needs no key, as vLLM's does not.
	e := s.engines["llm"]
	e.inFlight.Store(3)
	e.waiting.Store(2)
	m := scrape(t, ts.URL)
	if m[MetricRunning] != 3 || m[MetricWaiting] != 2 || m[MetricKVCacheUsage] != 0 {
		t.Errorf("gauges %v", m)
	}
	p := Params{KVBlockSize: 16, KVCacheBlocks: 10}
	sq := newSeq(33, 8, 0) // 3 blocks, then 41 tokens: 3 blocks
	sq.emitted.Store(8)
	if u := usage(&p, []*seq{sq, newSeq(16, 1, 0)}); u != 0.4 {
		t.Errorf("usage %v, want 0.4 (4 of 10 blocks)", u)
	}
}

func TestEmbeddings(t *testing.T) {
	_, url := clockedServer(t, nil)
	resp, b := post(t, url+"/v1/embeddings", `{"model":"llm","input":["one two three","four"]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(b), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Data) != 2 || len(r.Data[1].Embedding) != embeddingDim || r.Data[1].Index != 1 || r.Usage.PromptTokens != 4 {
		t.Errorf("reply %s", b)
	}
	for _, bad := range []string{`{"model":"llm","input":[]}`, `{"model":"llm","input":3}`, `{"model":"nope","input":"a"}`} {
		if resp, b := post(t, url+"/v1/embeddings", bad); resp.StatusCode < 400 {
			t.Errorf("%s: status %d %s", bad, resp.StatusCode, b)
		}
	}
}
