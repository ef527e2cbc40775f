package importer

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// A plain perf_analyzer CSV (no --verbose-csv) carries no average
// latency, response wait or request count: those figures are absent
// (and said to be), never 0; every column the file has is kept.
func TestCSVFiguresNotCarriedAreAbsent(t *testing.T) {
	f, err := os.Open("testdata/default.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := ParseCSV("default.csv", f, Options{Model: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	p := pts[0]
	for _, key := range []string{"latency_avg_us", "client_wait_us", "requests"} {
		if !slices.Contains(p.Summary.Absent, key) {
			t.Errorf("%s not marked absent: %v", key, p.Summary.Absent)
		}
	}
	for _, m := range []string{plan.MetricLatencyAvg, plan.MetricClientWait} {
		if v, ok := p.Summary.Value(m); ok {
			t.Errorf("%s has a value (%g) the file does not carry", m, v)
		}
	}
	if _, ok := p.Summary.Value(plan.MetricP99); !ok {
		t.Error("p99, which the file carries, has no value")
	}
	b, err := json.Marshal(p.Summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"latency_avg_us"`, `"client_wait_us"`, `"requests"`} {
		if strings.Contains(string(b), key+":") {
			t.Errorf("JSON carries %s: %s", key, b)
		}
	}
	if _, ok := p.Columns["Network+Server Send/Recv"]; !ok {
		t.Errorf("column Network+Server Send/Recv dropped: %v", p.Columns)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "absent (not 0)") {
		t.Errorf("notes do not say what is absent: %q", p.Notes)
	}
}

// importFile parses a testdata file with the importer its name implies.
func importFile(t *testing.T, name string, opts Options) result.Point {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parse := ParseCSV
	switch {
	case strings.HasSuffix(name, ".log"):
		parse = ParseLog
	case strings.HasPrefix(name, "genai_perf"):
		parse = ParseGenAIPerf
	}
	pts, err := parse(name, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return pts[0]
}

// Figures each import path does not carry are absent: never a 0 in the
// JSON, never a value a check could read.
func TestImportsLeaveOutWhatTheSourceLacks(t *testing.T) {
	for _, tc := range []struct {
		file    string
		opts    Options
		absent  []string // JSON keys (server.KEY, llm.KEY nested)
		metrics []string // metrics with no value
		kept    []string // metrics with a value
		columns []string // source columns kept
	}{{
		file:    "quickstart.log",
		absent:  []string{"latency_min_us", "latency_max_us", "errors"},
		metrics: []string{plan.MetricLatencyMax, plan.MetricErrors},
		kept:    []string{plan.MetricP99, plan.MetricLatencyAvg, plan.MetricClientWait},
	}, {
		file:    "verbose_metrics.csv",
		opts:    Options{Model: "simple"},
		absent:  []string{"server.request_count", "server.inference_count", "server.execution_count", "server.avg_request_us"},
		kept:    []string{plan.MetricServerQueue, plan.MetricServerInfer},
		columns: []string{"Server Queue"},
	}, {
		file:    "genai_perf.csv",
		opts:    Options{Model: "llama", Concurrency: 8},
		absent:  []string{"client_send_recv_us", "client_wait_us", "latency_std_us", "llm.input_tokens", "llm.output_tokens"},
		metrics: []string{plan.MetricClientSendRecv, plan.MetricClientWait},
		kept:    []string{plan.MetricLatencyMax, plan.MetricP99},
		columns: []string{"Output Sequence Length avg", "Input Sequence Length p99", "Request Throughput (per sec)"},
	}, {
		// perfscen's own LLM CSV has each distribution's mean and
		// percentiles, not its count or maximum: a bound on ttft_max
		// must find no value rather than a 0 that passes it.
		file: "perfscen_llm.csv",
		opts: Options{Model: "llm"},
		absent: []string{"llm.ttft.count", "llm.ttft.max_us", "llm.itl.max_us", "llm.tpot.max_us", "llm.streamed",
			"llm.tokens_from_usage", "llm.tokens_from_chunks"},
		metrics: []string{plan.MetricTTFTMax, "itl_max", "tpot_max", plan.MetricOutputTokensAvg},
		kept:    []string{plan.MetricTTFTP99, plan.MetricTTFTAvg, "itl_p99", plan.MetricOutputTokensPS},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			p := importFile(t, tc.file, tc.opts)
			for _, key := range tc.absent {
				if !slices.Contains(p.Summary.Absent, key) {
					t.Errorf("%s not marked absent: %v", key, p.Summary.Absent)
				}
			}
			for _, m := range tc.metrics {
				if v, ok := p.Summary.Value(m); ok {
					t.Errorf("%s has a value (%g) the file does not carry", m, v)
				}
			}
			for _, m := range tc.kept {
				if _, ok := p.Summary.Value(m); !ok {
					t.Errorf("%s, which the file carries, has no value", m)
				}
			}
			for _, c := range tc.columns {
				if _, ok := p.Columns[c]; !ok {
					t.Errorf("column %q dropped: %v", c, slices.Sorted(maps.Keys(p.Columns)))
				}
			}
			b, err := json.Marshal(p.Summary)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			for _, key := range tc.absent {
				obj, k := doc, key
				if block, rest, ok := strings.Cut(key, "."); ok {
					obj, _ = doc[block].(map[string]any)
					k = rest
				}
				if _, ok := obj[k]; ok {
					t.Errorf("JSON carries absent %s: %s", key, b)
				}
			}
		})
	}
}
