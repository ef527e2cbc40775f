package importer

import (
	"strings"
	"testing"
)

// Every mistake in an AIPerf export names the file, and the line (and
// column) where the file has one.
func TestAIPerfErrors(t *testing.T) {
	rec := func(md, metrics string) string {
		return `{"metadata": {` + md + `}, "metrics": {` + metrics + `}, "error": null}`
	}
	ok := `"request_start_ns": 1000, "request_end_ns": 2000000`
	tests := []struct {
		name, src string
		opts      Options
		want      string
	}{
		{"aggregate without model", `{"request_throughput": {"unit": "requests/sec", "avg": 1}}`, Options{Concurrency: 1}, "a.json: the export names no model"},
		{"aggregate without load", `{"request_throughput": {"unit": "requests/sec", "avg": 1}}`, Options{Model: "m"}, "does not state its load"},
		{"aggregate without throughput", `{"time_to_first_token": {"unit": "ms", "avg": 1}}`, Options{Model: "m", Concurrency: 1}, "needs request_throughput"},
		{"time in an unknown unit", `{"request_throughput": {"unit": "requests/sec", "avg": 1},
 "time_to_first_token": {"unit": "fortnights", "avg": 1}}`, Options{Model: "m", Concurrency: 1}, `a.json:2:25: time_to_first_token: unit "fortnights" is not a time`},
		{"a statistic not a number", `{"request_throughput": {"unit": "requests/sec", "avg": "fast"}}`, Options{Model: "m", Concurrency: 1}, "a.json:1:24: request_throughput:"},
		{"throughput not a rate", `{"request_throughput": {"unit": "requests", "avg": 3}}`, Options{Model: "m", Concurrency: 1}, `want a rate per second`},
		{"syntax", `{"request_throughput": {"unit": "requests/sec", "avg": 1},}`, Options{Model: "m", Concurrency: 1}, "a.json:1:"},
		{"record without times", rec(`"turn_index": 0`, ``), Options{Model: "m", Concurrency: 1}, "a.json:1: metadata: a record needs request_start_ns and request_end_ns"},
		{"record with a bad value", rec(ok, `"time_to_first_token": {"value": "soon", "unit": "ms"}`) + "\n", Options{Model: "m", Concurrency: 1},
			`a.json:1: metrics.time_to_first_token: value "soon" is not a number`},
		{"gaps not a list", "\n" + rec(ok, ``) + "\n" + rec(ok, `"inter_chunk_latency": {"value": 3, "unit": "ms"}`), Options{Model: "m", Concurrency: 1},
			"a.json:3: metrics.inter_chunk_latency: want a list of times"},
		{"records without model", rec(ok, ``), Options{Concurrency: 1}, "a.json: AIPerf's records name no model"},
		{"only warm-up", rec(ok+`, "benchmark_phase": "warmup"`, ``), Options{Model: "m", Concurrency: 1}, "a.json: no profiling records"},
		{"a cut record", rec(ok, ``) + "\n" + `{"metadata": {`, Options{Model: "m", Concurrency: 1}, "a.json:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse("a.json", []byte(tt.src), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
