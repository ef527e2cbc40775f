package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/memnet"
)

// paExport is perf_analyzer's profile export layout as
// docs/perf_analyzer-migration.md states it (after perf_analyzer's
// profile_data_exporter.cc), written here apart from the code that
// writes it: read strictly, a key it lacks fails the test.
type paExport struct {
	Experiments []struct {
		Experiment struct {
			Mode  string  `json:"mode"`
			Value float64 `json:"value"`
		} `json:"experiment"`
		Requests []struct {
			Timestamp          uint64           `json:"timestamp"`
			SequenceID         uint64           `json:"sequence_id"`
			RequestInputs      map[string]any   `json:"request_inputs"`
			ResponseTimestamps []uint64         `json:"response_timestamps"`
			ResponseOutputs    []map[string]any `json:"response_outputs"`
		} `json:"requests"`
		WindowBoundaries []uint64 `json:"window_boundaries"`
	} `json:"experiments"`
	Version     string `json:"version"`
	ServiceKind string `json:"service_kind"`
	Endpoint    string `json:"endpoint"`
}

// loadExport reads an export strictly: no key outside the layout, every
// key of the layout present.
func loadExport(t *testing.T, file string) paExport {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var x paExport
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var keys struct {
		Top         map[string]json.RawMessage
		Experiments []map[string]json.RawMessage `json:"experiments"`
	}
	_ = json.Unmarshal(b, &keys.Top)
	_ = json.Unmarshal(b, &keys)
	for _, k := range []string{"experiments", "version", "service_kind", "endpoint"} {
		if _, ok := keys.Top[k]; !ok {
			t.Errorf("%s: no %q", file, k)
		}
	}
	for i, e := range keys.Experiments {
		for _, k := range []string{"experiment", "requests", "window_boundaries"} {
			if _, ok := e[k]; !ok {
				t.Errorf("%s: experiments[%d] has no %q", file, i, k)
			}
		}
	}
	return x
}

// readExport checks an export of one experiment at mode/value against
// the layout and what the service kind sends and receives; it returns the
// number of requests recorded.
func readExport(t *testing.T, file, kind, mode string, value float64) int {
	t.Helper()
	x := loadExport(t, file)
	wantKind, wantEndpoint := kind, ""
	if kind == "openai" {
		wantEndpoint = "v1/chat/completions"
	}
	if x.ServiceKind != wantKind || x.Endpoint != wantEndpoint || !strings.HasPrefix(x.Version, "perfscen pa ") || len(x.Experiments) != 1 {
		t.Fatalf("export: kind %q endpoint %q version %q, %d experiments", x.ServiceKind, x.Endpoint, x.Version, len(x.Experiments))
	}
	e := x.Experiments[0]
	if e.Experiment.Mode != mode || e.Experiment.Value != value {
		t.Errorf("experiment %+v, want %s %g", e.Experiment, mode, value)
	}
	wb := e.WindowBoundaries
	if len(wb) < 6 || len(wb)%2 != 0 || !slices.IsSorted(wb) {
		t.Errorf("window boundaries %v: want a start and an end for each of 3 windows or more, in order", wb)
	}
	if len(e.Requests) == 0 {
		t.Fatal("no requests")
	}
	var last uint64
	for i, r := range e.Requests {
		if r.Timestamp < last || len(r.ResponseTimestamps) == 0 || len(r.ResponseTimestamps) != len(r.ResponseOutputs) ||
			r.ResponseTimestamps[0] < r.Timestamp || !slices.IsSorted(r.ResponseTimestamps) {
			t.Fatalf("request %d: %+v", i, r)
		}
		last = r.Timestamp
		switch kind {
		case "openai":
			checkOpenAIRecord(t, i, r.RequestInputs, r.ResponseOutputs)
		case "dynamic_grpc":
			s, _ := r.RequestInputs["message"].(string)
			if b, err := base64.StdEncoding.DecodeString(s); err != nil || len(b) == 0 || len(r.ResponseOutputs) != 1 {
				t.Fatalf("request %d: inputs %v, %d responses", i, r.RequestInputs, len(r.ResponseOutputs))
			}
		case "triton":
			for _, in := range []string{"INPUT0", "INPUT1"} {
				if v, _ := r.RequestInputs[in].([]any); len(v) != 16 {
					t.Fatalf("request %d: %s is %v, want 16 numbers", i, in, r.RequestInputs[in])
				}
			}
		}
	}
	if end := wb[len(wb)-1]; last > end {
		t.Errorf("a request sent at %d, after the last window's end %d", last, end)
	}
	return len(e.Requests)
}

// checkOpenAIRecord reads an OpenAI request as GenAI-Perf does: the
// payload is the body sent, each response a server-sent event, the last
// [DONE]; one content chunk a token, max_tokens of them (ignore_eos).
func checkOpenAIRecord(t *testing.T, i int, in map[string]any, outs []map[string]any) {
	t.Helper()
	s, _ := in["payload"].(string)
	var body struct {
		Messages  []any `json:"messages"`
		MaxTokens int   `json:"max_tokens"`
		Stream    bool  `json:"stream"`
	}
	if err := json.Unmarshal([]byte(s), &body); err != nil || len(body.Messages) == 0 || !body.Stream {
		t.Fatalf("request %d: payload %q: %v", i, s, err)
	}
	content := 0
	for j, o := range outs {
		ev, _ := o["response"].(string)
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || !strings.HasSuffix(data, "\n\n") {
			t.Fatalf("request %d response %d: %q is not a server-sent event", i, j, ev)
		}
		data = strings.TrimSpace(data)
		if j == len(outs)-1 {
			if data != "[DONE]" {
				t.Fatalf("request %d: the last response is %q, want [DONE]", i, data)
			}
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("request %d response %d: %q: %v", i, j, data, err)
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			content++
		}
	}
	if content != body.MaxTokens {
		t.Errorf("request %d: %d content chunks, max_tokens %d", i, content, body.MaxTokens)
	}
}

// paRequestCount is the Request count of a report's only level.
func paRequestCount(stdout string) int {
	n := 0
	for _, l := range strings.Split(stdout, "\n") {
		fmt.Sscanf(l, "    Request count: %d", &n)
	}
	return n
}

// A Triton sweep's export: one experiment a level in the order measured,
// each request's input tensors as flat arrays.
func TestPAProfileExportTriton(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, nil)
		export := filepath.Join(t.TempDir(), "export.json")
		code, stdout, stderr := runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "--concurrency-range", "1:2", "-p", "1000",
			"--profile-export-file", export)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		x := loadExport(t, export)
		if len(x.Experiments) != 2 || x.ServiceKind != "triton" {
			t.Fatalf("%d experiments of %s", len(x.Experiments), x.ServiceKind)
		}
		for i, e := range x.Experiments {
			if e.Experiment.Mode != "concurrency" || e.Experiment.Value != float64(i+1) || len(e.Requests) == 0 {
				t.Errorf("experiment %d: %+v, %d requests", i, e.Experiment, len(e.Requests))
			}
			for _, r := range e.Requests {
				if v, _ := r.RequestInputs["INPUT0"].([]any); len(v) != 16 || len(r.ResponseTimestamps) != 1 {
					t.Fatalf("request %+v", r)
				}
			}
		}
		// perf_analyzer refuses to overwrite an export.
		code, _, stderr = runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "--profile-export-file", export)
		if code != exitcode.Invalid || !strings.Contains(stderr, "Failed to parse --profile-export-file. Path must not already exist.") {
			t.Errorf("an existing export: exit %d: %s", code, stderr)
		}
	})
}

// --request-intervals sends on the file's schedule in a loop: the level is
// reported at the schedule's mean rate (perf_analyzer's request-rate
// report and CSV), and the export's send timestamps are exactly the
// schedule's on the fake clock, keyed request_rate 0 as perf_analyzer keys
// a custom-interval run.
func TestPARequestIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, nil) // simple: 20 ms a request
		dir := t.TempDir()
		iv := writeFile(t, filepath.Join(dir, "intervals.txt"), "30000\n50000\n40000\n")
		export, csv := filepath.Join(dir, "export.json"), filepath.Join(dir, "out.csv")
		code, stdout, stderr := runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "--request-intervals", iv, "-p", "2000",
			"-f", csv, "--profile-export-file", export)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		o := paSections(stdout)
		if len(o.blocks) != 1 || o.blocks[0][0] != "Request Rate: 25 inference requests per seconds" ||
			len(o.summary) != 2 || !strings.HasPrefix(o.summary[1], "Request Rate: 25, throughput: ") {
			t.Errorf("report:\n%s", stdout)
		}
		b, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		if h := strings.SplitN(string(b), "\n", 2)[0]; !strings.HasPrefix(h, "Request Rate,Inferences/Second,") {
			t.Errorf("CSV header %s", h)
		}
		x := loadExport(t, export)
		if len(x.Experiments) != 1 || x.Experiments[0].Experiment.Mode != "request_rate" || x.Experiments[0].Experiment.Value != 0 {
			t.Fatalf("experiments %+v", x.Experiments)
		}
		rs := x.Experiments[0].Requests
		gaps := []time.Duration{30 * time.Millisecond, 50 * time.Millisecond, 40 * time.Millisecond}
		if len(rs) < 3*len(gaps) {
			t.Fatalf("%d requests", len(rs))
		}
		for i := 1; i < len(rs); i++ {
			if got, want := time.Duration(rs[i].Timestamp-rs[i-1].Timestamp), gaps[(i-1)%len(gaps)]; got != want {
				t.Fatalf("send %d came %v after the one before, want %v", i, got, want)
			}
		}

		file := filepath.Join(dir, "iv.yaml")
		code, _, stderr = runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "--request-intervals", iv, "-p", "2000", "--emit-scenario", file)
		if code != 0 || !strings.Contains(stderr, "loaded back and valid") {
			t.Fatalf("emit: exit %d: %s", code, stderr)
		}
		if code, stdout, stderr := runPAMemRun(t, &mem, file, dir); code != 0 || !strings.Contains(stdout, "simple/r=25") {
			t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}
