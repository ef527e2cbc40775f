package refserver

import (
	"strings"
	"testing"
)

func TestOpenAIEndpoint(t *testing.T) {
	s := startServer(t, Options{ModelParams: map[string]map[string]string{
		"llm":    {"decode_base": "1ms", "decode_per_seq": "0s", "prefill_base": "0s"},
		"simple": {"added_latency": "1ms"},
	}})
	r := do(t, s, "GET", "/v1/models", nil, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"id":"llm"`) {
		t.Fatalf("/v1/models: %d %s", r.status, r.body)
	}
	r = do(t, s, "POST", "/v1/completions", nil, []byte(`{"model":"llm","prompt":"hi","max_tokens":3,"ignore_eos":true}`))
	if r.status != 200 || !strings.Contains(string(r.body), `"completion_tokens":3`) {
		t.Fatalf("/v1/completions: %d %s", r.status, r.body)
	}
	// The Triton side still answers.
	if r := do(t, s, "GET", "/v2/health/ready", nil, nil); r.status != 200 {
		t.Fatalf("/v2/health/ready: %d", r.status)
	}
}

func TestOpenAIParamsChecked(t *testing.T) {
	err := CheckOptions(Options{Models: []string{"llm", "simple"}, ModelParams: map[string]map[string]string{"llm": {"decode_slowdown": "x"}}})
	if err == nil || !strings.Contains(err.Error(), `model "llm": parameter "decode_slowdown"`) {
		t.Fatalf("err = %v", err)
	}
	if err := CheckOptions(Options{Models: []string{"llm_fp8"}, ModelParams: map[string]map[string]string{"llm": {"decode_slowdown": "1.1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{ModelParams: map[string]map[string]string{"llm": {"nope": "1"}}}); err == nil {
		t.Fatal("New accepted an unknown LLM parameter")
	}
}
