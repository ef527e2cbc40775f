package pacompat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// paCase is one command line perf_analyzer 2.46.0 (r24.05) was given,
// with the first line it printed (testdata/perf_analyzer/errors.txt).
type paCase struct {
	args []string
	said string
}

func readPACases(t *testing.T) []paCase {
	t.Helper()
	b, err := os.ReadFile("testdata/perf_analyzer/errors.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []paCase
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if a, ok := strings.CutPrefix(lines[i], "== "); ok && i+1 < len(lines) {
			out = append(out, paCase{args: strings.Fields(a), said: lines[i+1]})
		}
	}
	return out
}

// Every command line perf_analyzer refused is refused here with its
// message; every one it accepted (and then failed to reach a server with)
// is accepted, except where perfscen is stricter on purpose.
func TestParseAgreesWithPerfAnalyzer(t *testing.T) {
	stricter := map[string]string{
		// std::stoi reads "5s" as 5 ms; perfscen will not guess.
		"-m x -p 5s": "Failed to parse --measurement-interval. Invalid value provided: 5s",
	}
	// Lines the reference build (without GPU support) refuses and a
	// perf_analyzer built with it accepts, as perfscen does.
	withGPU := map[string]bool{"-m x --shared-memory cuda": true}
	cases := readPACases(t)
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		line := strings.Join(tc.args, " ")
		_, err := Parse(tc.args)
		var ue *UsageError
		switch {
		case withGPU[line]:
			if err != nil {
				t.Errorf("%s: %v, want it accepted as with GPU support", line, err)
			}
		case stricter[line] != "":
			if err == nil || err.Error() != stricter[line] {
				t.Errorf("%s: %v, want %q", line, err, stricter[line])
			}
		case strings.HasPrefix(tc.said, "Error: "):
			if !errors.As(err, &ue) || ue.Msg != strings.TrimPrefix(tc.said, "Error: ") {
				t.Errorf("%s:\n got %v\nwant %s", line, err, tc.said)
			}
		case strings.Contains(tc.said, "perf_analyzer: "):
			want := tc.said[strings.Index(tc.said, "perf_analyzer: ")+len("perf_analyzer: "):]
			if !errors.As(err, &ue) || ue.Msg != want {
				t.Errorf("%s:\n got %v\nwant %s", line, err, want)
			}
		case strings.HasPrefix(tc.said, "error: failed to get model metadata"):
			if err != nil {
				t.Errorf("%s: perf_analyzer accepted it; got %v", line, err)
			}
		default:
			t.Errorf("%s: unrecognised capture %q", line, tc.said)
		}
	}
}

func TestParseReadsPerfAnalyzerSyntax(t *testing.T) {
	tests := []struct {
		args  string
		check func(p *Params) bool
	}{
		{"-m nnUnet --percentile=95 --concurrency=10", func(p *Params) bool {
			return p.ModelName == "nnUnet" && p.Percentile == 95 && p.UsingConcurrencyRange && p.Concurrency.Start == 10 && p.Concurrency.End == 1
		}},
		{"-m yolov7_qat -u 127.0.0.1:8001 -i grpc --shared-memory system --concurrency-range 8:128:8", func(p *Params) bool {
			return p.URL == "127.0.0.1:8001" && p.Protocol == "grpc" && p.SharedMemory == "system" &&
				p.Concurrency == Range[uint64]{Start: 8, End: 128, Step: 8, Parts: 3} && p.MaxThreads == 16
		}},
		// The L0 client's deprecated flags: -c without -d leaves the range at -t's 1.
		{"-m m -b 8 -s 50 -u localhost:8001 -i gRPC -c 4", func(p *Params) bool {
			return p.BatchSize == 8 && p.StabilityPct == 50 && p.Protocol == "grpc" && p.Concurrency.Start == 1 && p.Concurrency.End == 1 && p.MaxConcurrency == 4
		}},
		{"-m m -d -c 4 -l 20", func(p *Params) bool {
			return p.Concurrency.Start == 1 && p.Concurrency.End == 4 && p.LatencyThresholdMs == 20
		}},
		{"-m m -t3 -p2000 -vv -b4", func(p *Params) bool {
			return p.Concurrency.Start == 3 && p.MeasurementIntervalMs == 2000 && p.Verbose && p.ExtraVerbose && p.BatchSize == 4
		}},
		{"-m m -i grpc", func(p *Params) bool { return p.URL == "localhost:8001" }},
		// The seeds' dynamic gRPC line: no -m, -u=HOST as perf_analyzer's
		// docs write it, gRPC without -i.
		{"--service-kind=dynamic_grpc -u=localhost:8001 --input-data=/tmp --grpc-method=v1.Simple/Echo", func(p *Params) bool {
			return p.ServiceKind == "dynamic_grpc" && p.URL == "localhost:8001" && p.Protocol == "grpc" && p.GRPCMethod == "v1.Simple/Echo" &&
				p.modelLabel() == "v1.Simple.Echo" && len(p.Notes) == 1
		}},
		{"--service-kind=dynamic_grpc --grpc-method=/v1.Simple/Echo", func(p *Params) bool {
			return p.URL == "localhost:8001" && p.modelLabel() == "v1.Simple.Echo"
		}},
		{"-m facebook/opt-125m --service-kind=openai --endpoint=v1/chat/completions --async --input-data=/tmp", func(p *Params) bool {
			return p.ServiceKind == "openai" && p.Endpoint == "v1/chat/completions" && p.URL == "localhost:8000" && p.Protocol == "http" && p.Async
		}},
		{"-m m --request-rate-range 10:100:10 --request-distribution poisson", func(p *Params) bool {
			return !p.TargetsConcurrency() && p.RequestRate.End == 100 && p.Distribution == "poisson" && p.MaxThreads == 4
		}},
		{"-m m --request-count 40", func(p *Params) bool {
			return p.MeasurementMode == "count_windows" && p.MeasurementRequestCount == 40
		}},
		{"-m m -H Authorization:Bearer:x -H X-A:1", func(p *Params) bool {
			return p.Headers["Authorization"] == "Bearer:x" && p.Headers["X-A"] == "1" && strings.Join(p.HeaderOrder, ",") == "Authorization,X-A"
		}},
		{"-m m --shape a:b:1,2 --shape IN:3", func(p *Params) bool {
			return len(p.Shapes["a:b"]) == 2 && p.Shapes["IN"][0] == 3
		}},
		{"-m m --collect-metrics -u host:9000", func(p *Params) bool { return p.MetricsURL == "host:8002/metrics" }},
		{"-m m --binary-search --concurrency-range 1:64 -l 50", func(p *Params) bool { return p.BinarySearch }},
		// perf_analyzer.cc: a synchronous open range ends at max_threads
		// (16 by default at a concurrency), with its warning.
		{"-m m --concurrency-range 1:0 -l 50", func(p *Params) bool {
			return p.Concurrency.End == 16 && strings.Join(p.Warnings, "|") == "WARNING: The maximum attainable concurrency will be limited by max_threads specification."
		}},
		{"-m m --concurrency-range 2:0:2 -l 50 --max-threads 8", func(p *Params) bool { return p.Concurrency.End == 8 && len(p.Warnings) == 1 }},
		{"-m m -a --concurrency-range 1:0 -l 50", func(p *Params) bool { return p.Concurrency.End == 0 && len(p.Warnings) == 0 }},
		{"-m m --concurrency-range 1:4 --max-threads 2", func(p *Params) bool {
			return p.Concurrency.End == 4 && strings.Join(p.Warnings, "|") == "WARNING: Overriding max_threads specification to ensure requested concurrency range."
		}},
	}
	for _, tc := range tests {
		p, err := Parse(strings.Fields(tc.args))
		if err != nil {
			t.Errorf("%s: %v", tc.args, err)
			continue
		}
		if !tc.check(p) {
			t.Errorf("%s: %+v", tc.args, p)
		}
	}
}

// What perfscen cannot honour is refused by name with its reason.
func TestParseRefusesWhatItCannotHonour(t *testing.T) {
	tests := []struct{ args, option string }{
		{"-m m --endpoint v1/chat/completions", "--endpoint"},
		{"-m m --grpc-method a.B/C", "--grpc-method"},
		{"-m m --service-kind openai --input-data /tmp -i grpc", "-i grpc"},
		{"--service-kind dynamic_grpc --grpc-method a.B/C -i http", "-i http"},
		{"--service-kind dynamic_grpc --grpc-method a.B/C --streaming", "--streaming"},
		{"-m m --service-kind torchserve --input-data /tmp --shared-memory system", "--shared-memory"},
		{"-m m --trace-level TIMESTAMPS", "--trace-level"},
		{"-m m --periodic-concurrency-range 1:4 --streaming -i grpc", "--periodic-concurrency-range"},
		{"-m m -i grpc --request-parameter max_tokens:256:int", "--request-parameter"},
		{"-m m --enable-mpi", "--enable-mpi"},
		{"-m m --bls-composing-models a,b", "--bls-composing-models"},
		{"-m m --input-tensor-format json", "--input-tensor-format/--output-tensor-format"},
		{"-m m -i grpc --service-kind tfserving --grpc-compression-algorithm gzip", "--grpc-compression-algorithm"},
		{"-m m -r 2", "-r/--max-trials"},
		{"-m m -s 0", "-s/--stability-percentage"},
		{"-m m --request-rate-range 10 --request-count 50", "--request-count with --request-rate-range"},
	}
	for _, tc := range tests {
		_, err := Parse(strings.Fields(tc.args))
		var ue *UnsupportedError
		if !errors.As(err, &ue) || ue.Option != tc.option || ue.Reason == "" {
			t.Errorf("%s: %v, want %s refused", tc.args, err, tc.option)
		}
	}
	if _, err := Parse([]string{"-m", "m", "stray"}); err == nil || !strings.Contains(err.Error(), `unexpected argument "stray"`) {
		t.Errorf("a stray word: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"-m x --concurrency-range 1:4", "-m x -b8 -vd -c4", "--conc=1:2:3 -m y -l 5 --binary-search", "-m x --shape a:1,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(strings.Fields(s))
		if err == nil && (p.ModelName == "" && !p.Version && p.ServiceKind != "dynamic_grpc") {
			t.Errorf("%q: accepted without -m", s)
		}
	})
}

// --request-intervals reads its file as it parses: microseconds a line,
// each fault at its line (exit 2 with perf_analyzer's prefix).
func TestParseRequestIntervals(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		body string
		want []time.Duration
		err  string
	}{
		{"1000\n2000\n\n500\n", []time.Duration{time.Millisecond, 2 * time.Millisecond, 500 * time.Microsecond}, ""},
		{"0\n100000\n", []time.Duration{0, 100 * time.Millisecond}, ""},
		{"1000\n1.5\n", nil, `Failed to parse --request-intervals. %s:2: "1.5" is not an interval in whole microseconds`},
		{"-3\n", nil, `:1: "-3" is not an interval`},
		{"\n\n", nil, "no intervals"},
		{"0\n0\n", nil, "every interval is 0"},
	}
	for i, tc := range tests {
		f := filepath.Join(dir, fmt.Sprintf("iv%d.txt", i))
		if err := os.WriteFile(f, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Parse([]string{"-m", "m", "--request-intervals", f})
		if tc.err != "" {
			var ue *UsageError
			want := tc.err
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, f)
			}
			if !errors.As(err, &ue) || !strings.Contains(ue.Msg, want) {
				t.Errorf("%q: %v, want %q", tc.body, err, want)
			}
			continue
		}
		if err != nil || !slices.Equal(p.Intervals, tc.want) || p.TargetsConcurrency() {
			t.Errorf("%q: %v %v", tc.body, p, err)
		}
	}
	if _, err := Parse([]string{"-m", "m", "--request-intervals", filepath.Join(dir, "iv0.txt"), "--concurrency-range", "4"}); err == nil ||
		!strings.Contains(err.Error(), "Cannot specify more then one inference load mode.") {
		t.Errorf("with a concurrency range: %v", err)
	}
}
