package openai

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/refserver"
)

// The simulated engines answer /v1/ on the reference server's HTTP port,
// with their parameters from the shared model parameters.
func TestMountOnReferenceServer(t *testing.T) {
	s, err := refserver.New(refserver.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "-", Mounts: []refserver.Mount{Mount()},
		ModelParams: map[string]map[string]string{"llm": {"decode_base": "1ms", "decode_per_seq": "0s", "prefill_base": "0s"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	post := func(path, body string) (int, string) {
		resp, err := http.Post("http://"+s.HTTPAddr()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/v1/completions", `{"model":"llm","prompt":"hi","max_tokens":3,"ignore_eos":true}`); code != 200 || !strings.Contains(body, `"completion_tokens":3`) {
		t.Fatalf("/v1/completions: %d %s", code, body)
	}
	// The engines' figures are on the same port, as vLLM serves them.
	resp, err := http.Get("http://" + s.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `vllm:prefix_cache_queries_total{model_name="llm"} 1`) {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	err = refserver.CheckOptions(refserver.Options{Mounts: []refserver.Mount{Mount()}, Models: []string{"llm", "simple"},
		ModelParams: map[string]map[string]string{"llm": {"decode_slowdown": "x"}}})
	if err == nil || !strings.Contains(err.Error(), `model "llm": parameter "decode_slowdown"`) {
		t.Fatalf("a bad engine parameter: err = %v", err)
	}
}
