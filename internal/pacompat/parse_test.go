package pacompat

import (
	"errors"
	"os"
	"strings"
	"testing"
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
		{"-m m --service-kind openai --input-data /tmp --endpoint v1/chat/completions", "--endpoint"},
		{"-m m --service-kind torchserve --input-data /tmp --shared-memory system", "--shared-memory"},
		{"-m m --trace-level TIMESTAMPS", "--trace-level"},
		{"-m m --periodic-concurrency-range 1:4 --streaming -i grpc", "--periodic-concurrency-range"},
		{"-m m --request-intervals /etc/hostname", "--request-intervals"},
		{"-m m -i grpc --request-parameter max_tokens:256:int", "--request-parameter"},
		{"-m m --enable-mpi", "--enable-mpi"},
		{"-m m --bls-composing-models a,b", "--bls-composing-models"},
		{"-m m --input-tensor-format json", "--input-tensor-format/--output-tensor-format"},
		{"-m m -i grpc --service-kind tfserving --grpc-compression-algorithm gzip", "--grpc-compression-algorithm"},
		{"-m m -r 2", "-r/--max-trials"},
		{"-m m -s 0", "-s/--stability-percentage"},
		{"-m m --request-rate-range 10 --request-count 50", "--request-count with --request-rate-range"},
		{"-m m --profile-export-file /tmp/no-such-export.json", "--profile-export-file"},
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
		if err == nil && (p.ModelName == "" && !p.Version) {
			t.Errorf("%q: accepted without -m", s)
		}
	})
}
