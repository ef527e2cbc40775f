package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/importer"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func init() { register(newImportCmd) }

func newImportCmd(e *env) *cobra.Command {
	var (
		out  string
		opts importer.Options
	)
	cmd := &cobra.Command{
		Use: "import FILE...",
		Example: `  perfscen import --model resnet50 -o results.json perf_analyzer.csv
  perfscen import --model resnet50 -o results.json pa_console.log
  perfscen import --model llama --concurrency 8 -o results.json artifacts/llama-openai-chat-concurrency8/profile_export_genai_perf.csv
  perfscen import -o results.json artifacts/run/profile_export_aiperf.json
  perfscen import --model llama --concurrency 8 -o results.json artifacts/run/profile_export.jsonl
  perfscen import --model resnet18 --service-kind torchserve -o results.json torchserve.csv
  perfscen baseline update --from results.json --baseline baselines/resnet.json`,
		Short: "Convert perf_analyzer CSV (-f) or console output, genai-perf's CSV or AIPerf's exports into a perfscen result file",
		Long: `import reads perf_analyzer's -f CSV (with or without --verbose-csv) or its
console output (one or several runs in one log) and writes a perfscen result
document, so the numbers can be gated, compared with a baseline and reported.

The model name comes from the echoed "perf_analyzer -m NAME" command line in a
log; a CSV never names its model, so --model is required for CSV input.

genai-perf's profile_export_genai_perf.csv (one load level per file) gives an
LLM point: time to first token, its inter-token latency (per request, so
perfscen's TPOT), request latency, request and output token throughput and
goodput. It states neither model nor load: pass --model and --concurrency
(or --request-rate). Values are milliseconds as genai-perf writes them.

AIPerf's profile_export_aiperf.json (every metric's statistics) gives an LLM
point the same way, with the model and load from its input_config when it
names them (else --model and --concurrency or --request-rate); its time
units are converted to microseconds. Its per-request profile_export.jsonl
gives one point whose figures perfscen computes from the records: request
latency, TTFT (and TTFT by turn of multi-turn sessions), its per-request
inter-token latency as TPOT, its inter-chunk gaps as ITL, token totals, and
throughput over the span from the first request's start to the last one's
end; warm-up records are left out, failed ones counted as errors. The
records name neither model nor load: pass --model and --concurrency (or
--request-rate).

perf_analyzer's other service kinds (--service-kind tfserving, torchserve,
dynamic_grpc) measure on the client only: their points have no server-side
figures, and take the protocol the kind implies (gRPC for TF Serving and
dynamic gRPC, HTTP for TorchServe). A log says its kind on its command line
or "Service Kind:" line; a CSV does not, so pass --service-kind. A dynamic
gRPC run without -m is named after its --grpc-method (v1.Simple/Echo becomes
v1.Simple.Echo), and its client send/receive split is not imported:
perf_analyzer's dynamic gRPC client counts the server's time in it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			run, err := importer.ImportFiles(files, opts)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			run.Environment.PerfscenVersion = version
			if err := result.WriteFile(out, run); err != nil {
				return exitcode.AsEnvironment(fmt.Errorf("writing %s: %w", out, err))
			}
			fmt.Fprintf(e.stdout, "imported %d point(s) from %d file(s) (%s) into %s\n", len(run.Points), len(files), run.Source, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "results.json", "result file to write")
	f.StringVar(&opts.Model, "model", "", "model name when the input does not name it (always needed for CSV)")
	f.IntVar(&opts.BatchSize, "batch-size", 0, "batch size when the input does not state it (default 1, as perf_analyzer)")
	f.Var(protocolFlag{&opts.Protocol}, "protocol", "protocol when the input does not reveal it: http or grpc (default http)")
	f.IntVar(&opts.Concurrency, "concurrency", 0, "load level of a genai-perf CSV, which does not state it (or --request-rate)")
	f.Float64Var(&opts.RequestRate, "request-rate", 0, "request rate of a genai-perf CSV, which does not state it (or --concurrency)")
	f.Var(serviceKindFlag{&opts.ServiceKind}, "service-kind", "perf_analyzer's --service-kind when the input does not say it (a CSV): "+strings.Join(importer.ServiceKinds, ", "))
	return cmd
}

// protocolFlag parses --protocol as it is read, so a misspelt protocol stops
// at the command line (exit 2) instead of landing in the result file.
type protocolFlag struct{ p *plan.Protocol }

func (f protocolFlag) String() string {
	if f.p == nil {
		return ""
	}
	return string(*f.p)
}

func (f protocolFlag) Set(s string) error {
	p, err := plan.ParseProtocol(s)
	if err != nil {
		return err
	}
	*f.p = p
	return nil
}

func (protocolFlag) Type() string { return "protocol" }

// serviceKindFlag checks --service-kind as it is read (exit 2 on a
// misspelt kind).
type serviceKindFlag struct{ k *string }

func (f serviceKindFlag) String() string {
	if f.k == nil {
		return ""
	}
	return *f.k
}

func (f serviceKindFlag) Set(s string) error {
	k, err := importer.ParseServiceKind(s)
	if err != nil {
		return err
	}
	*f.k = k
	return nil
}

func (serviceKindFlag) Type() string { return "kind" }
