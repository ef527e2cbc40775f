package pacompat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/scenario"
)

// Each command line becomes a scenario that loads, says which flag each
// key comes from, and plans what perf_analyzer would measure.
func TestBuildScenario(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.json")
	if err := os.WriteFile(data, []byte(`{"data": [{"TORCHSERVE_INPUT": ["x.jpg"]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	intervals := filepath.Join(dir, "intervals.txt")
	if err := os.WriteFile(intervals, []byte("10000\n30000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chat := filepath.Join(dir, "chat.json")
	if err := os.WriteFile(chat, []byte(`{"data": [{"payload": [{"messages": [{"role": "user", "content": "hi"}], "stream": true, "stream_options": {"include_usage": true}}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args  string
		yaml  []string // lines the scenario must hold
		check func(p *plan.Plan) string
	}{
		{"-m nnUnet --percentile=95 --concurrency=10", []string{"  concurrency: 10   # --concurrency-range", "  percentile: 95   # --percentile"},
			func(p *plan.Plan) string {
				if len(p.Points) != 1 || p.Points[0].Load.Concurrency != 10 || p.Measurement.Trials != 3 || p.Server().URL != "localhost:8000" {
					return "one point at concurrency 10, 3 trials"
				}
				return ""
			}},
		{"-m m -i grpc --concurrency-range 8:128:8 -l 50 --binary-search", []string{"  - while: latency_avg < 50ms", "    method: binary   # --binary-search", "    decide: merged"},
			func(p *plan.Plan) string {
				s := p.Searches
				if len(p.Points) != 0 || len(s) != 1 || s[0].Start != 8 || s[0].End != 128 || s[0].Step != 8 || s[0].Decide != plan.DecideMerged || p.Server().URL != "localhost:8001" {
					return "a binary search of 8..128 by 8 alone"
				}
				return ""
			}},
		{"-m m --request-rate-range 10:50:10 --request-distribution poisson --max-threads 8", []string{"  distribution: poisson   # --request-distribution", "  request_rate: \"10:50:10\"   # --request-rate-range"},
			func(p *plan.Plan) string {
				if len(p.Points) != 5 || p.Points[4].Load.Rate != 50 || p.Points[0].Load.MaxThreads != 8 || p.Points[0].Load.Distribution != plan.Poisson {
					return "five Poisson rate points, 8 workers"
				}
				return ""
			}},
		{"-m m -d -c 4 -l 20 --sequence-length 5", []string{"    sequence_length: 5   # --sequence-length", "  - while: latency_avg < 20ms", "    concurrency: \"1:4:1\"   # -d -c"},
			func(p *plan.Plan) string {
				if !p.Models[0].Sequence || p.Models[0].SequenceLength != 5 || p.Searches[0].Method != plan.SearchLinear {
					return "a sequence model, a linear search"
				}
				return ""
			}},
		{"-m m -i grpc --grpc-compression-algorithm deflate", []string{"  kserve:", "    grpc_compression: deflate   # --grpc-compression-algorithm"},
			func(p *plan.Plan) string {
				if p.Server().Options["grpc_compression"] != "deflate" {
					return "the kserve block with deflate"
				}
				return ""
			}},
		// perf_analyzer varies sequence lengths by 20% unless told
		// otherwise; its default is written out, and 0 turns it off.
		{"-m m --sequence-length 5", []string{"    sequence_length_variation: 20   # perf_analyzer's default --sequence-length-variation"},
			func(p *plan.Plan) string {
				if p.Models[0].SequenceLengthVariation != 20 {
					return "the default 20% variation"
				}
				return ""
			}},
		{"-m m --sequence-length 5 --sequence-length-variation 7.5", []string{"    sequence_length_variation: 7.5   # --sequence-length-variation"},
			func(p *plan.Plan) string {
				if p.Models[0].SequenceLengthVariation != 7.5 {
					return "a 7.5% variation"
				}
				return ""
			}},
		{"-m m --sequence-length 5 --sequence-length-variation 0", []string{"    sequence_length: 5   # --sequence-length"},
			func(p *plan.Plan) string {
				if p.Models[0].SequenceLengthVariation != 0 {
					return "no variation"
				}
				return ""
			}},
		{"-m m --concurrency-range 1:0 -l 50 --max-threads 8", []string{"    concurrency: \"1:8:1\"   # --concurrency-range", "  # --max-threads 8: a synchronous open range (end 0) ends there"},
			func(p *plan.Plan) string {
				if len(p.Searches) != 1 || p.Searches[0].End != 8 {
					return "a search of 1..8: the open range ends at --max-threads in sync mode"
				}
				return ""
			}},
		{"-m m -i grpc --shared-memory cuda --output-shared-memory-size 4096", []string{"  shared_memory: cuda   # --shared-memory", "  output_shared_memory_size: 4096   # --output-shared-memory-size"},
			func(p *plan.Plan) string {
				if p.Points[0].SharedMemory != plan.ShmCUDA {
					return "CUDA shared memory"
				}
				return ""
			}},
		{"-m m --collect-metrics --metrics-interval 250", []string{"  # --metrics-interval 250: perfscen pa scrapes every 250 ms; a scenario scrapes every 1000 ms"},
			func(p *plan.Plan) string { return "" }},
		{"-m m --request-count 40 -H X-A:1 --collect-metrics -u h:9000 -b 4 --shape IN:3,4", []string{"  iterations: 40   # --request-count", "    X-A: \"1\"", "  metrics_url: h:8002/metrics"},
			func(p *plan.Plan) string {
				if p.Points[0].Load.Mode != plan.LoadIterations || p.Points[0].Load.Iterations != 40 || p.Server().Headers["X-A"] != "1" ||
					p.Points[0].BatchSize != 4 || p.Points[0].Shapes["IN"][1] != 4 {
					return "40 iterations, the header, batch 4, the shape"
				}
				return ""
			}},
		{"-m m --service-kind=triton_c_api --triton-server-directory /opt/tritonserver --model-repository /models", []string{"  kind: triton_c_api   # --service-kind", "    library: /opt/tritonserver/lib/libtritonserver.so   # --triton-server-directory (its lib/libtritonserver.so)"},
			func(p *plan.Plan) string {
				if p.Server().Kind != "triton_c_api" || p.Server().URL != "" {
					return "Triton in process"
				}
				return ""
			}},
		{"-m m --service-kind tfserving -i grpc --model-signature-name predict", []string{"  kind: tfserving   # --service-kind", "    signature_name: predict   # --model-signature-name"},
			func(p *plan.Plan) string {
				if p.Server().Kind != "tfserving" || p.Server().URL != "localhost:8500" {
					return "TF Serving on 8500"
				}
				return ""
			}},
		// Custom intervals: the schedule file, at its mean rate (2 sends
		// in 40 ms).
		{"-m m --request-intervals " + intervals + " --max-threads 2", []string{"  mode: request_rate   # --request-intervals", "  request_intervals: intervals.txt   # --request-intervals", "  max_threads: 2   # --max-threads"},
			func(p *plan.Plan) string {
				l := p.Points[0].Load
				if len(p.Points) != 1 || l.Distribution != plan.Intervals || l.Rate != 50 || len(l.Intervals) != 2 || l.Intervals[1] != 30*time.Millisecond || l.MaxThreads != 2 {
					return "one point replaying the two intervals at 50/s on average"
				}
				return ""
			}},
		{"-m llm --service-kind=openai --endpoint=v1/completions --input-data=" + chat, []string{"  kind: openai   # --service-kind", "  endpoint: v1/completions   # --endpoint", "  include_usage: true   # the payloads' stream_options.include_usage"},
			func(p *plan.Plan) string {
				if p.Server().Kind != plan.KindOpenAI || p.LLM.Endpoint != "v1/completions" || !p.LLM.Stream || !p.LLM.IncludeUsage {
					return "openai, v1/completions, streamed with usage"
				}
				return ""
			}},
		{"--service-kind=dynamic_grpc -u=h:50051 --grpc-method=v1.Simple/Echo --input-data=zero", []string{"  kind: grpc   # --service-kind=dynamic_grpc", "    method: v1.Simple/Echo   # --grpc-method", "  - name: v1.Simple.Echo"},
			func(p *plan.Plan) string {
				if p.Server().Kind != "grpc" || p.Server().URL != "h:50051" || p.Models[0].Input.Kind != "zero" {
					return "kind grpc at h:50051 with the empty message"
				}
				return ""
			}},
		{"-m tiny --service-kind torchserve -u 127.0.0.1:8080 --input-data " + data, []string{"  kind: torchserve   # --service-kind", "    input_data: data.json   # --input-data"},
			func(p *plan.Plan) string {
				if p.Server().Kind != "torchserve" || p.Models[0].Input.Kind != "json" {
					return "TorchServe with its JSON input"
				}
				return ""
			}},
	}
	for _, tc := range tests {
		p, err := Parse(strings.Fields(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		sc, err := BuildScenario(p, strings.Fields(tc.args), filepath.Join(dir, "pa.yaml"))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		for _, l := range tc.yaml {
			if !strings.Contains(string(sc.YAML), l) {
				t.Errorf("%s: the scenario lacks %q:\n%s", tc.args, l, sc.YAML)
			}
		}
		s, err := scenario.Parse(filepath.Join(dir, "pa.yaml"), sc.YAML, nil)
		if err != nil {
			t.Errorf("%s: the scenario does not load: %v\n%s", tc.args, err, sc.YAML)
			continue
		}
		pl, err := scenario.Expand(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.check(pl); want != "" {
			t.Errorf("%s: want %s; plan %+v", tc.args, want, pl)
		}
	}
}
