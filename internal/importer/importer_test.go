package importer

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/schemas"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestImportGolden(t *testing.T) {
	tests := []struct {
		file string
		opts Options
	}{
		{"quickstart.log", Options{}},
		{"multi.log", Options{}},
		{"grpc_nomodel.log", Options{Model: "echo"}},
		{"sweep_unstable.log", Options{}},
		{"request_rate.log", Options{}},
		{"default.csv", Options{Model: "inception_graphdef"}},
		{"verbose_metrics.csv", Options{Model: "resnet50_libtorch", BatchSize: 4, Protocol: "grpc"}},
		{"request_rate_noserver.csv", Options{Model: "simple"}},
		{"perfscen_llm.csv", Options{Model: "llm"}},
		{"genai_perf.csv", Options{Model: "llama", Concurrency: 8}},
		{"genai_perf_goodput.csv", Options{Model: "llama", RequestRate: 20}},
		{"torchserve.log", Options{}},
		{"torchserve_rate.log", Options{}},
		{"tfserving.log", Options{}},
		{"dynamic_grpc_sweep.log", Options{}},
		{"torchserve.csv", Options{Model: "tiny", ServiceKind: KindTorchServe}},
		{"tfserving_verbose.csv", Options{Model: "resnet50", ServiceKind: KindTFServing}},
		{"dynamic_grpc.csv", Options{Model: "greeter", ServiceKind: KindDynamicGRPC}},
		{"aiperf_profile_export_aiperf.json", Options{}},
		{"aiperf_profile_export.jsonl", Options{Model: "llama", Concurrency: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			run, err := ImportFiles([]string{filepath.Join("testdata", tt.file)}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := result.Encode(run)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			validate(t, got)
			golden := filepath.Join("testdata", tt.file+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from golden; diff with -update and git diff\n%s", tt.file, got)
			}
			if _, err := result.Decode(golden, got); err != nil {
				t.Errorf("imported run does not decode: %v", err)
			}
		})
	}
}

// validate holds imported documents to the shipped result schema.
func validate(t *testing.T, doc []byte) {
	t.Helper()
	s, err := schemas.ResultSchema()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("imported run violates result.schema.json: %v", err)
	}
}

func TestImportFacts(t *testing.T) {
	run, err := ImportFiles([]string{"testdata/multi.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 2 {
		t.Fatalf("got %d points, want 2", len(run.Points))
	}
	p := run.Points[0]
	if p.ID != "inception_graphdef/c=1" || p.Summary.P95Us != 19673 || p.Summary.Requests != 348 ||
		p.Summary.ClientSendRecvUs != 200 || p.Summary.ClientWaitUs != 13817 || p.Summary.Server.ComputeInferUs != 11748 {
		t.Errorf("first point = %+v", p)
	}
	if q := run.Points[1]; q.ModelName != "my_model" || q.Summary.LatencyAvgUs != 50951 || q.Summary.LatencyStdUs != 2265 {
		t.Errorf("second point = %+v", q)
	}

	run, err = ImportFiles([]string{"testdata/sweep_unstable.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Points[0]; got.BatchSize != 2 || got.Protocol != "grpc" || got.Summary.ClientSendRecvUs != 206 {
		t.Errorf("batch/protocol/split not read: %+v", got)
	}
	if got := run.Points[1]; got.Status != result.PointUnstable || got.ID != "inception_graphdef/c=4" {
		t.Errorf("unstable level = %+v", got)
	}

	run, err = ImportFiles([]string{"testdata/verbose_metrics.csv"}, Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Points[0]; got.Concurrency != 1 || got.Summary.GPU == nil || math.Abs(got.Summary.GPU.PowerAvgWatts-112.2) > 1e-9 || got.Summary.ClientWaitUs != 14220 {
		t.Errorf("verbose row = %+v", got)
	}
}

// perfscen's own LLM columns come back as the point's LLM figures, the
// ones thresholds and baselines read; empty cells stay absent.
func TestImportLLMColumns(t *testing.T) {
	run, err := ImportFiles([]string{"testdata/perfscen_llm.csv"}, Options{Model: "llm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 4 {
		t.Fatalf("%d points, want 4", len(run.Points))
	}
	figure := func(p *result.Point, metric string) (float64, bool) {
		f, ok := p.Figure(metric)
		return f.Value, ok
	}
	first := &run.Points[0]
	for _, tc := range []struct {
		metric string
		want   float64
	}{
		{plan.MetricTTFTP95, 56160}, {plan.MetricTTFTAvg, 38610}, {plan.MetricITLP50, 8800},
		{plan.MetricTPOTP99, 11440}, {plan.MetricOutputTokensPS, 876.8}, {plan.MetricP95, 350000},
	} {
		if v, ok := figure(first, tc.metric); !ok || v != tc.want {
			t.Errorf("%s: %g %v, want %g", tc.metric, v, ok, tc.want)
		}
	}
	if _, ok := figure(first, plan.MetricGoodput); ok {
		t.Error("an empty goodput cell gave a goodput figure")
	}
	if l := first.Summary.LLM; l.OutputTokens != 3200 || l.InputTokens != 51200 {
		t.Errorf("token totals %d/%d", l.OutputTokens, l.InputTokens)
	}
	if v, ok := figure(&run.Points[1], plan.MetricGoodput); !ok || v != 27.45 {
		t.Errorf("goodput %g %v, want 27.45", v, ok)
	}
	unstreamed := &run.Points[2]
	if _, ok := figure(unstreamed, plan.MetricTTFTP50); ok || unstreamed.ID != "llm/c=8" {
		t.Errorf("%s: a TTFT figure from empty cells", unstreamed.ID)
	}
	if v, ok := figure(unstreamed, plan.MetricOutputTokensPS); !ok || v != 1673.6 {
		t.Errorf("unstreamed tokens/s %g %v", v, ok)
	}
	if !strings.Contains(strings.Join(run.Points[3].Notes, "\n"), "counted content chunks") {
		t.Errorf("token source not kept: %q", run.Points[3].Notes)
	}
}

// genai-perf's CSV gives one LLM point: milliseconds become the
// microseconds of perfscen's figures, its per-request inter-token latency
// is perfscen's TPOT, and values with thousands separators read whole.
func TestImportGenAIPerf(t *testing.T) {
	run, err := ImportFiles([]string{"testdata/genai_perf.csv"}, Options{Model: "llama", Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	if run.Source != FormatGenAIPerf || len(run.Points) != 1 {
		t.Fatalf("source %q, %d points", run.Source, len(run.Points))
	}
	p := &run.Points[0]
	if p.ID != "llama/c=8" || p.Concurrency != 8 || p.Summary.Requests != 365 {
		t.Errorf("point %s c=%d requests %d", p.ID, p.Concurrency, p.Summary.Requests)
	}
	for _, tc := range []struct {
		metric string
		want   float64
	}{
		{plan.MetricTTFTAvg, 45210}, {plan.MetricTTFTP95, 120020}, {plan.MetricTTFTMax, 1210530},
		{plan.MetricTPOTP50, 9600}, {plan.MetricTPOTP99, 14900},
		{plan.MetricLatencyAvg, 1302550}, {plan.MetricP99, 2500750}, {plan.MetricLatencyMax, 2801400},
		{plan.MetricThroughput, 6.08}, {plan.MetricOutputTokensPS, 780.33},
	} {
		f, ok := p.Figure(tc.metric)
		if !ok || math.Abs(f.Value-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: %g %v, want %g", tc.metric, f.Value, ok, tc.want)
		}
	}
	for _, m := range []string{plan.MetricITLP50, plan.MetricGoodput} {
		if f, ok := p.Figure(m); ok {
			t.Errorf("%s: %g from a file without it", m, f.Value)
		}
	}
	if p.Summary.LatencyMinUs != 950100 {
		t.Errorf("latency min %g", p.Summary.LatencyMinUs)
	}

	run, err = ImportFiles([]string{"testdata/genai_perf_goodput.csv"}, Options{Model: "llama", RequestRate: 20})
	if err != nil {
		t.Fatal(err)
	}
	p = &run.Points[0]
	if f, ok := p.Figure(plan.MetricGoodput); !ok || f.Value != 15.2 || p.ID != "llama/r=20" {
		t.Errorf("%s goodput %g %v", p.ID, f.Value, ok)
	}
	if f, _ := p.Figure(plan.MetricOutputTokensPS); f.Value != 1183.5 {
		t.Errorf("tokens/s %g", f.Value)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"Time To Second Token (ms)", "Output Sequence Length", "GPU telemetry"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes do not say %q is not imported: %s", want, notes)
		}
	}
}

func TestImportErrors(t *testing.T) {
	const genai = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n" +
		"Time To First Token (ms),45.21,20.11,90.00,180.44,120.02,88.70,60.30,40.12,30.05\n" +
		"\n" +
		"Metric,Value\n" +
		"Output Token Throughput (per sec),780.33\n" +
		"Request Throughput (per sec),6.08\n"
	c1 := Options{Model: "m", Concurrency: 1}
	tests := []struct {
		name, body string
		opts       Options
		want       string
	}{
		{"empty", "  \n\n", Options{Model: "m"}, "empty input"},
		{"unknown first column", "Load,Inferences/Second\n1,2\n", Options{Model: "m"}, "log"}, // not a CSV: read as a log
		{"unknown column", "Concurrency,Inferences/Second,Bogus\n1,2,3\n", Options{Model: "m"}, `x:1:3: unknown perf_analyzer CSV column "Bogus"`},
		{"non-numeric cell", "Concurrency,Inferences/Second,p50 latency\n1,2,3\n2,abc,4\n", Options{Model: "m"}, `x:3:2: column "Inferences/Second": "abc" is not a non-negative number`},
		{"bad concurrency", "Concurrency,Inferences/Second\n1.5,2\n", Options{Model: "m"}, `x:2:1: column "Concurrency"`},
		{"short row", "Concurrency,Inferences/Second,p50 latency\n1,2\n", Options{Model: "m"}, "x:2: row has 2 fields, header has 3"},
		{"header only", "Concurrency,Inferences/Second\n", Options{Model: "m"}, "header but no rows"},
		{"negative TTFT", "Concurrency,Inferences/Second,TTFT p50\n1,2,3\n2,4,-5\n", Options{Model: "m"}, `x:3:3: column "TTFT p50": "-5" is not a non-negative number`},
		{"tokens/s not a number", "Concurrency,Inferences/Second,Output Tokens/Second\n1,2,fast\n", Options{Model: "m"}, `x:2:3: column "Output Tokens/Second": "fast"`},
		{"fractional token total", "Concurrency,Inferences/Second,Output Tokens\n1,2,10.5\n", Options{Model: "m"}, `x:2:3: column "Output Tokens": "10.5" is not a non-negative integer`},
		{"unknown token source", "Concurrency,Inferences/Second,Token Count Source\n1,2,guess\n", Options{Model: "m"}, `x:2:3: column "Token Count Source": "guess" is not a token count source`},
		{"csv without model", "Concurrency,Inferences/Second\n1,2\n", Options{}, "pass --model"},
		{"log without blocks", "*** Measurement Settings ***\n  Batch size: 1\n", Options{Model: "m"}, "no perf_analyzer results found"},
		{"log without model", "Request concurrency: 1\n  Client:\n    Throughput: 5 infer/sec\n", Options{}, "x:1: the log does not show the perf_analyzer command line"},
		{"log bad number", "perf_analyzer -m a\nRequest concurrency: 1\n  Client:\n    Throughput: fast infer/sec\n", Options{}, `x:4:17: Throughput: "fast" is not a non-negative number`},
		{"log bad count", "perf_analyzer -m a\nRequest concurrency: 1\n  Client:\n    Request count: -3\n", Options{}, `x:4:20: Request count: "-3"`},
		{"log bad breakdown", "perf_analyzer -m a\nRequest concurrency: 1\n  Server:\n    Avg request latency: 3 usec (queue x usec)\n", Options{}, `x:4:`},
		{"genai-perf without load", genai, Options{Model: "m"}, "x: a genai-perf CSV does not state its load; pass --concurrency N or --request-rate R"},
		{"genai-perf with two loads", genai, Options{Model: "m", Concurrency: 1, RequestRate: 2}, "not both"},
		{"genai-perf without model", genai, Options{Concurrency: 1}, "x: a genai-perf CSV does not name its model; pass --model"},
		{"genai-perf negative value", strings.Replace(genai, "45.21", "-45.21", 1), c1, `x:2:2: Time To First Token avg: "-45.21" is not a non-negative number`},
		{"genai-perf bad separator", strings.Replace(genai, "180.44", `"1,80.44"`, 1), c1, `x:2:5: Time To First Token p99: "1,80.44" is not a non-negative number`},
		{"genai-perf text value", strings.Replace(genai, "6.08", "fast", 1), c1, `x:6:2: Request Throughput: "fast" is not a non-negative number`},
		{"genai-perf fractional count", genai + "Request Count (count),3.50\n", c1, `x:7:2: Request Count: "3.50" is not a whole count`},
		{"genai-perf seconds", strings.Replace(genai, "First Token (ms)", "First Token (s)", 1), c1, `x:2:1: metric "Time To First Token": unit "s", want ms`},
		{"genai-perf duplicate metric", genai + "Request Throughput (per sec),7.00\n", c1, `x:7:1: metric "Request Throughput" appears twice`},
		{"genai-perf short row", strings.Replace(genai, ",30.05", "", 1), c1, "x:2: row has 9 fields, header has 10"},
		{"genai-perf unknown statistic", strings.Replace(genai, "p25", "p33", 1), c1, `x:1:10: unknown genai-perf CSV column "p33"`},
		{"genai-perf without throughput", strings.Replace(genai, "Request Throughput (per sec),6.08\n", "", 1), c1, `x: genai-perf CSV has no "Request Throughput (per sec)" row`},
		{"unknown point status", "Concurrency,Inferences/Second,Status\n1,2,stable\n2,3,wobbly\n", Options{Model: "m"}, `x:3:3: column "Status": "wobbly" is not a point status`},
		{"log bad batch flag", "perf_analyzer -m a -b zero\n", Options{}, `x:1: perf_analyzer command line: batch size "zero"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse("x", []byte(tt.body), tt.opts)
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if tt.want == "log" {
				return
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestImportRejectsMixedKinds(t *testing.T) {
	_, err := ImportFiles([]string{"testdata/default.csv", "testdata/quickstart.log"}, Options{Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "separately") {
		t.Fatalf("err = %v", err)
	}
}

func TestImportUniqueIDs(t *testing.T) {
	run, err := ImportFiles([]string{"testdata/quickstart.log", "testdata/quickstart.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Points[0].ID != "simple/c=1" || run.Points[1].ID != "simple/c=1#2" {
		t.Errorf("ids = %q, %q", run.Points[0].ID, run.Points[1].ID)
	}
}

// perf_analyzer's TF Serving, TorchServe and dynamic gRPC service kinds
// measure on the client only: their points have no server figures (absent,
// not zero), take the protocol the kind implies, and a dynamic gRPC run
// is named by its method and keeps no client split.
func TestImportServiceKinds(t *testing.T) {
	tests := []struct {
		file     string
		opts     Options
		id       string
		protocol string
		split    bool
	}{
		{"torchserve.log", Options{}, "resnet50/c=1", "http", true},
		{"torchserve_rate.log", Options{}, "tiny/r=50", "http", true},
		{"tfserving.log", Options{}, "resnet50/c=1", "grpc", true},
		{"dynamic_grpc_sweep.log", Options{}, "helloworld.Greeter.SayHello/c=1", "grpc", false},
		{"torchserve.csv", Options{Model: "tiny", ServiceKind: KindTorchServe}, "tiny/c=1", "http", true},
		{"tfserving_verbose.csv", Options{Model: "m", ServiceKind: "TENSORFLOW_SERVING"}, "m/c=1", "grpc", true},
		{"dynamic_grpc.csv", Options{Model: "g", ServiceKind: KindDynamicGRPC}, "g/c=1", "grpc", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			run, err := ImportFiles([]string{filepath.Join("testdata", tt.file)}, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			p := run.Points[0]
			if p.ID != tt.id || string(p.Protocol) != tt.protocol {
				t.Errorf("point %s over %s, want %s over %s", p.ID, p.Protocol, tt.id, tt.protocol)
			}
			for _, q := range run.Points {
				f := q.FigureMetrics()
				if f.Server != nil {
					t.Errorf("%s: server figures %+v", q.ID, f.Server)
				}
				if _, ok := f.Value(plan.MetricServerQueue); ok {
					t.Errorf("%s: server_queue has a value", q.ID)
				}
				if _, ok := f.Value(plan.MetricClientSendRecv); ok != tt.split {
					t.Errorf("%s: client split present %v, want %v", q.ID, ok, tt.split)
				}
				if len(q.Notes) == 0 || !strings.Contains(strings.Join(q.Notes, " "), "measures on the client only") {
					t.Errorf("%s: notes %q", q.ID, q.Notes)
				}
			}
		})
	}
	if _, err := ImportFiles([]string{"testdata/torchserve.csv"}, Options{Model: "m", ServiceKind: "torchserv"}); err == nil {
		t.Error("a misspelt service kind was taken")
	}
}
