package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/openai/llmsim"
)

// streamBody is a vLLM-style chat stream of n one-token chunks.
func streamBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for range n {
		b.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"cmpl-1","object":"chat.completion.chunk","created":1,"model":"llm","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":256,"total_tokens":264}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

type replay struct{ body []byte }

func (r replay) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(r.body))}, nil
}

// BenchmarkClientPerToken is the client's cost per streamed token: SSE
// parsing, chunk decoding and timing, without a network. ns/token and
// allocs/token are reported per token of a 256-token reply.
func BenchmarkClientPerToken(b *testing.B) {
	const tokens = 256
	c, err := New(Options{URL: "http://bench.invalid", Endpoint: EndpointChat})
	if err != nil {
		b.Fatal(err)
	}
	c.hc.Transport = replay{streamBody(tokens)}
	tr := kinds.TokenTrace{Gaps: make([]time.Duration, 0, tokens)}
	ctx := context.Background()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	for b.Loop() {
		if err := c.Generate(ctx, nil, &tr); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	runtime.ReadMemStats(&ms1)
	n := float64(b.N) * tokens
	b.ReportMetric(float64(el.Nanoseconds())/n, "ns/token")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/token")
}

// BenchmarkEmbeddedC256 drives the embedded engine at concurrency 256 for
// b.N requests of 32 streamed tokens and reports the heap in use after the
// first and the last quarter of them: flat memory means the two agree.
func BenchmarkEmbeddedC256(b *testing.B) {
	sim, err := llmsim.New(llmsim.Options{Params: map[string]map[string]string{
		"llm": {"decode_base": "2ms", "decode_per_seq": "10us", "prefill_base": "0s", "prefill_per_token": "0s"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	ts := httptest.NewServer(sim)
	defer ts.Close()
	c, err := New(Options{URL: ts.URL, Endpoint: EndpointChat})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	bodies, err := Synthetic(Prompts{InputMean: 32, OutputMean: 32, Count: 64, Seed: 1, IgnoreEOS: true},
		BodyOptions{Model: "llm", Endpoint: EndpointChat, Stream: true, IncludeUsage: true})
	if err != nil {
		b.Fatal(err)
	}
	var next, done, tokens, failed atomic.Int64
	total := int64(max(b.N, 1024))
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	var early, late float64
	var once1, once2 sync.Once
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := kinds.TokenTrace{}
			for {
				i := next.Add(1)
				if i > total {
					return
				}
				if err := c.Generate(context.Background(), bodies[(int(i)+w)%len(bodies)], &tr); err != nil {
					failed.Add(1)
				}
				tokens.Add(int64(tr.OutputTokens))
				switch d := done.Add(1); {
				case d == total/4:
					once1.Do(func() { early = heap() })
				case d == total*3/4:
					once2.Do(func() { late = heap() })
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d of %d requests failed", failed.Load(), total)
	}
	b.ReportMetric(float64(tokens.Load())/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(early, "heapMiB@25%")
	b.ReportMetric(late, "heapMiB@75%")
}
