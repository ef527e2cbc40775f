package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
)

func TestParseEngineMetrics(t *testing.T) {
	text := `# HELP vllm:num_requests_running x
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{engine="1",model_name="m"} 2
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.4
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{model_name="m"} 1000
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{model_name="m"} 600
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="other"} 7
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs 4
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12
`
	r, err := ParseEngineMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.For("m")
	if !ok || *m.Running != 5 || *m.KVCacheUsage < 0.3-1e-12 || *m.KVCacheUsage > 0.3+1e-12 || *m.PrefixQueries != 1000 || *m.PrefixHits != 600 || m.Waiting != nil {
		t.Errorf("model m: %+v", m)
	}
	if o, _ := r.For("other"); o.Waiting == nil || *o.Waiting != 7 || o.Running != nil {
		t.Errorf("model other: %+v", o)
	}
	// A model the labels do not name reads the unlabelled figures.
	if u, ok := r.For("any"); !ok || u.Waiting == nil || *u.Waiting != 4 {
		t.Errorf("unlabelled: %+v", u)
	}
	if _, err := ParseEngineMetrics(strings.NewReader("vllm:num_requests_running{ 3\n")); err == nil {
		t.Error("a malformed exposition was read")
	}
}

func FuzzParseEngineMetrics(f *testing.F) {
	f.Add("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 3\n")
	f.Add("vllm:prefix_cache_hits_total{model_name=\"m\"} 1e9\nvllm:kv_cache_usage_perc 0.5\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseEngineMetrics(strings.NewReader(text))
		if err != nil {
			return
		}
		for model, f := range r {
			for _, v := range []*float64{f.Running, f.Waiting, f.KVCacheUsage, f.PrefixQueries, f.PrefixHits} {
				if v == nil {
					continue
				}
				_ = *v
			}
			if _, ok := r.For(model); !ok {
				t.Fatalf("model %q read but not found", model)
			}
		}
		var _ kinds.EngineReading = r
	})
}

func embeddingsClient(t *testing.T, reply string) *Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(reply))
	}))
	t.Cleanup(ts.Close)
	c, err := New(Options{URL: ts.URL, Endpoint: EndpointEmbeddings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// An embeddings reply is one vector per input and usage; anything else
// is a failed request naming what is wrong.
func TestEmbeddingsReplies(t *testing.T) {
	tests := []struct{ reply, err string }{
		{`{"data":[{"embedding":[0.1,0.2]},{"embedding":[0.3]}],"usage":{"prompt_tokens":7}}`, ""},
		{`{"data":[]}`, "the reply carried no embeddings"},
		{`{"data":[{"embedding":null}]}`, "data[0] carries no embedding"},
		{`{"error":{"message":"too long"}}`, "too long"},
		{`[1,`, "the reply is not JSON"},
	}
	for _, tt := range tests {
		var tr kinds.TokenTrace
		err := embeddingsClient(t, tt.reply).Generate(context.Background(), []byte(`{}`), &tr)
		switch {
		case tt.err == "" && (err != nil || tr.Chunks != 2 || tr.InputTokens != 7 || !tr.FromUsage || tr.OutputTokens != 0):
			t.Errorf("%s: err %v, trace %+v", tt.reply, err, tr)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: err %v, want %q", tt.reply, err, tt.err)
		}
	}
}

func FuzzEmbeddingsReply(f *testing.F) {
	f.Add(`{"data":[{"embedding":[0.1]}],"usage":{"prompt_tokens":3}}`)
	f.Add(`{"data":[{"embedding":"AAAA"}]}`)
	f.Fuzz(func(t *testing.T, reply string) {
		c := &Client{opts: Options{Endpoint: EndpointEmbeddings}}
		var tr kinds.TokenTrace
		if err := c.readEmbeddings([]byte(reply), &tr); err != nil {
			return
		}
		if tr.Chunks < 1 || tr.OutputTokens != 0 {
			t.Fatalf("accepted reply gave %+v", tr)
		}
	})
}
