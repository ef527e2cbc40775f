package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seeds' perf_analyzer line for an OpenAI-compatible server, run as it
// stands against a real one (make conformance-llm starts Ollama serving a
// tiny generated model and sets the variables): perf_analyzer's console and
// CSV, its per-request profile export with every server-sent event, and the
// emitted scenario run again with perfscen run.
func TestPAOpenAISeedAgainstARealServer(t *testing.T) {
	url, model := os.Getenv("PERFSCEN_LLM_URL"), os.Getenv("PERFSCEN_LLM_MODEL")
	if url == "" || model == "" {
		t.Skip("LLM CONFORMANCE SKIPPED: PERFSCEN_LLM_URL and PERFSCEN_LLM_MODEL are not set (make conformance-llm starts a real server)")
	}
	dir := t.TempDir()
	in := writeFile(t, filepath.Join(dir, "input_data.json"), `{"data": [
  {"payload": [{"messages": [{"role": "user", "content": "Say something about load tests."}], "max_tokens": 8, "stream": true}]},
  {"payload": [{"messages": [{"role": "user", "content": "And about baselines."}], "max_tokens": 12, "stream": true}]}
]}`)
	csv, export, emitted := filepath.Join(dir, "out.csv"), filepath.Join(dir, "export.json"), filepath.Join(dir, "seed.yaml")
	host := strings.TrimPrefix(url, "http://")
	seed := []string{"pa", "-m", model, "--service-kind=openai", "--endpoint=v1/chat/completions", "--async",
		"--input-data=" + in, "-u", host, "-p", "3000"}

	code, stdout, stderr := runAtRoot(t, nil, append(seed, "-f", csv, "--profile-export-file", export)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"Request concurrency: 1", "Throughput:", "p50 latency:", "Inferences/Second vs. Client Average Batch Latency"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the console lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(csv)
	if err != nil || !strings.HasPrefix(string(b), "Concurrency,Inferences/Second,") {
		t.Errorf("CSV %q: %v", b, err)
	}

	var ex struct {
		Experiments []struct {
			Experiment struct {
				Mode  string `json:"mode"`
				Value int    `json:"value"`
			} `json:"experiment"`
			Requests []struct {
				Timestamp          int64                        `json:"timestamp"`
				RequestInputs      map[string]string            `json:"request_inputs"`
				ResponseTimestamps []int64                      `json:"response_timestamps"`
				ResponseOutputs    []map[string]json.RawMessage `json:"response_outputs"`
			} `json:"requests"`
			WindowBoundaries []int64 `json:"window_boundaries"`
		} `json:"experiments"`
		ServiceKind string `json:"service_kind"`
		Endpoint    string `json:"endpoint"`
	}
	b, err = os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatalf("profile export: %v", err)
	}
	if ex.ServiceKind != "openai" || ex.Endpoint != "v1/chat/completions" || len(ex.Experiments) != 1 ||
		ex.Experiments[0].Experiment.Mode != "concurrency" || ex.Experiments[0].Experiment.Value != 1 {
		t.Fatalf("profile export header: %+v", ex)
	}
	e := ex.Experiments[0]
	if len(e.Requests) == 0 || len(e.WindowBoundaries) < 2 {
		t.Fatalf("profile export: %d requests, %d window boundaries", len(e.Requests), len(e.WindowBoundaries))
	}
	for i, r := range e.Requests {
		// A streamed reply: the role chunk, a chunk per token, the finish
		// chunk and [DONE], each timed after the request left.
		if len(r.ResponseTimestamps) < 3 || len(r.ResponseOutputs) != len(r.ResponseTimestamps) ||
			r.ResponseTimestamps[0] < r.Timestamp || !strings.Contains(r.RequestInputs["payload"], `"stream":true`) {
			t.Fatalf("request %d: %d timestamps, %d outputs, sent %d, first response %v, payload %q", i,
				len(r.ResponseTimestamps), len(r.ResponseOutputs), r.Timestamp, r.ResponseTimestamps, r.RequestInputs["payload"])
		}
		var last string
		if err := json.Unmarshal(r.ResponseOutputs[len(r.ResponseOutputs)-1]["response"], &last); err != nil || !strings.Contains(last, "[DONE]") {
			t.Fatalf("request %d: the last event is %q (%v), not [DONE]", i, last, err)
		}
	}
	t.Logf("%d requests exported; the console: %s", len(e.Requests), firstLine(stdout, "Throughput:"))

	if code, stdout, stderr := runAtRoot(t, nil, append(seed, "--emit-scenario", emitted)...); code != 0 {
		t.Fatalf("--emit-scenario: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runAtRoot(t, nil, "run", "--no-baseline", "--progress", "never", "--out", filepath.Join(dir, "r.json"), emitted); code != 0 {
		t.Fatalf("perfscen run of the emitted scenario: exit %d\n%s%s", code, stdout, stderr)
	}
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
