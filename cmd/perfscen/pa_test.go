package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
)

// The perf_analyzer command lines of the seeds, with the host and model
// changed to the reference server's, and the captures of perf_analyzer
// 2.46.0 running them against `perfscen serve --model-param
// simple.added_latency=20ms` (internal/pacompat/testdata/perf_analyzer).
var paSeeds = []struct {
	name string
	args []string
}{
	{"seed1", []string{"-m", "simple", "-u", "127.0.0.1:8000", "--percentile=95", "--concurrency=10"}},
	{"seed2", []string{"-m", "simple", "-u", "127.0.0.1:8001", "-i", "grpc", "--shared-memory", "system", "--concurrency-range", "8:128:8"}},
	{"seed3", []string{"-m", "simple", "-b", "2", "-s", "50", "-u", "127.0.0.1:8001", "-i", "grpc", "-c", "4"}},
}

const paCaptures = "../../internal/pacompat/testdata/perf_analyzer/"

// paServer serves the reference server on mem at perf_analyzer's default
// addresses, as the captures were made: simple with a 20 ms service time.
func paServer(t *testing.T, mem *memnet.Network, params map[string]map[string]string) {
	t.Helper()
	if params == nil {
		params = map[string]map[string]string{"simple": {"added_latency": "20ms"}}
	}
	s, err := refserver.New(refserver.Options{HTTPAddr: "127.0.0.1:8000", GRPCAddr: "127.0.0.1:8001", Listen: mem.Listen,
		PlainTimers: true, ShutdownGrace: 200e6, ModelParams: params})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
}

func runPAMem(t *testing.T, mem *memnet.Network, args ...string) (int, string, string) {
	t.Helper()
	return runAtRoot(t, &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, append([]string{"pa"}, args...)...)
}

// paOutput is perf_analyzer's console report cut into its sections.
type paOutput struct {
	settings []string
	blocks   [][]string // one per level: "Request concurrency: N" and what follows
	summary  []string
}

func paSections(out string) paOutput {
	var o paOutput
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	i := 0
	for ; i < len(lines) && lines[i] != "*** Measurement Settings ***"; i++ {
	}
	for ; i < len(lines) && lines[i] != ""; i++ {
		o.settings = append(o.settings, lines[i])
	}
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "Inferences/Second vs."):
			o.summary = lines[i:]
			return o
		case strings.HasPrefix(l, "Request concurrency:"), strings.HasPrefix(l, "Request Rate:"):
			o.blocks = append(o.blocks, []string{l})
		case len(o.blocks) > 0 && l != "":
			o.blocks[len(o.blocks)-1] = append(o.blocks[len(o.blocks)-1], l)
		}
	}
	return o
}

var numRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?`)

// shape is a line with its numbers taken out: two reports have the same
// sections when their lines have the same shapes.
func shape(l string) string { return numRE.ReplaceAllString(l, "N") }

func shapes(ls []string) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = shape(l)
	}
	return strings.Join(out, "\n")
}

// Each seed command line runs unchanged under perfscen pa (on the fake
// clock, the reference server in memory) and prints perf_analyzer's
// sections, line for line in shape: the settings verbatim, each level's
// Client and Server blocks, the closing summary. Its -f CSV has
// perf_analyzer's header verbatim and rows of the same shape, and perfscen
// import reads it.
func TestPASeedsMatchPerfAnalyzer(t *testing.T) {
	for _, seed := range paSeeds {
		t.Run(seed.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				paServer(t, &mem, nil)
				dir := t.TempDir()
				csv := filepath.Join(dir, seed.name+".csv")
				args := append(append([]string{}, seed.args...), "-f", csv)
				if seed.name == "seed3" {
					args = append(args, "--verbose-csv") // as captured
				}
				code, stdout, stderr := runPAMem(t, &mem, args...)
				if code != exitcode.OK {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				golden(t, filepath.Join("testdata", "pa", seed.name+".golden"), stdout)
				matchCapture(t, seed.name, stdout, csv)
				out := filepath.Join(dir, "imported.json")
				if code, stdout, stderr := runCLI(t, "import", "--model", "simple", "-o", out, csv); code != 0 || !strings.Contains(stdout, "imported") {
					t.Errorf("perfscen import of the CSV: exit %d\n%s%s", code, stdout, stderr)
				}
			})
		})
	}
}

// --emit-scenario writes the seed as a scenario that validates and runs,
// loaded back before it is written.
func TestPAEmitScenario(t *testing.T) {
	for _, seed := range paSeeds {
		t.Run(seed.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				paServer(t, &mem, nil)
				dir := t.TempDir()
				file := filepath.Join(dir, seed.name+".yaml")
				code, _, stderr := runPAMem(t, &mem, append(append([]string{}, seed.args...), "--emit-scenario", file)...)
				if code != 0 || !strings.Contains(stderr, "loaded back and valid") {
					t.Fatalf("emit: exit %d: %s", code, stderr)
				}
				body, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join("testdata", "pa", seed.name+".yaml"), string(body))
				if code, stdout, stderr := runCLI(t, "validate", file); code != 0 {
					t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
				}
				code, stdout, stderr := runAtRoot(t, &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, "run", "-q", file, "--out-dir", dir)
				if code != 0 || !strings.Contains(stdout, "PASS") {
					t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
				}
			})
		})
	}
}

// Two lines of one model, emitted to two files of one folder, are two
// scenarios with two names, which one perfscen run takes together (it
// refused them as both named perf_analyzer-simple); the run hint of a
// line with -f keeps its CSV as --csv, in the message and the file.
func TestPAEmitTwoLinesOfOneModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, nil)
		dir := t.TempDir()
		a, b, csv := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "b.csv")
		if code, _, stderr := runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "-p", "400", "--emit-scenario", a); code != 0 {
			t.Fatalf("a: exit %d: %s", code, stderr)
		}
		code, _, stderr := runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8001", "-i", "grpc", "-p", "400", "-f", csv, "--emit-scenario", b)
		if code != 0 {
			t.Fatalf("b: exit %d: %s", code, stderr)
		}
		if want := "run it with: perfscen run " + b + " --csv " + csv + "\n"; !strings.HasSuffix(stderr, want) {
			t.Errorf("b's hint: %q, want it to end %q", stderr, want)
		}
		body, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"name: perf_analyzer-simple-b\n", "# Run it with: perfscen run FILE --csv " + csv + "\n"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("b.yaml lacks %q:\n%s", want, body)
			}
		}
		code, stdout, stderr := runAtRoot(t, &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, "run", "-q", a, b, "--out-dir", dir)
		if code != 0 || strings.Count(stdout, "PASS") != 2 {
			t.Fatalf("run a.yaml b.yaml: exit %d\n%s%s", code, stdout, stderr)
		}
		for _, name := range []string{"perf_analyzer-simple-a", "perf_analyzer-simple-b"} {
			if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
				t.Errorf("%s's result: %v", name, err)
			}
		}
	})
}

// A command line perf_analyzer refuses, or one asking for what perfscen
// cannot do, exits 2 naming the reason; nothing is measured.
func TestPABadCommandLines(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-m", "x", "--concurrency-range", "1:4", "--request-rate-range", "10:20"}, "Cannot specify more then one inference load mode."},
		{[]string{"-m", "x", "--binary-search", "--concurrency-range", "1:8"}, "The --latency-threshold cannot be 0 for binary search mode."},
		{[]string{"-m", "x", "--request", "4"}, "option '--request' is ambiguous"},
		{[]string{"-m", "x", "--trace-level", "OFF"}, "--trace-level is not supported by perfscen pa: perfscen does not change the server's trace settings"},
		{[]string{"--concurrency-range", "1:4"}, "Failed to parse -m (model name). The value must be specified."},
		{[]string{"-m", "x", "--request-rate-range", "10", "--request-count", "50"}, "--request-count with --request-rate-range is not supported by perfscen pa: perf_analyzer sends the N requests at the request rate"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"pa"}, tc.args...)...)
		if code != exitcode.Invalid || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q", tc.args, code, stdout, stderr)
		}
	}
}

// The C API kind names the repository it could not use, exit 2, before
// any measurement (perf_analyzer too prints its settings first).
func TestPACAPIMissingRepository(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-repository")
	code, stdout, stderr := runCLI(t, "pa", "-m", "x", "--service-kind", "triton_c_api", "--model-repository", missing)
	if code != exitcode.Invalid || !strings.Contains(stderr, missing+" is not a folder") || strings.Contains(stdout, "Request concurrency") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

// -l ends perf_analyzer's sweep at the first level whose stabilizing
// latency reaches the limit, or bisects the range with --binary-search;
// only the levels under it are reported. On the fake clock p95 at
// concurrency c is c × 20 ms exactly, so under 90 ms the answer is 4.
func TestPALatencyThreshold(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		levels  string // the levels probed, in order
		summary string
	}{
		{"linear", []string{"--concurrency-range", "1:8", "-l", "90"}, "1 2 3 4 5", "1 2 3 4"},
		{"binary", []string{"--concurrency-range", "1:16", "-l", "90", "--binary-search"}, "1 16 8 4 6 5", "1 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				paServer(t, &mem, nil)
				args := append([]string{"-m", "simple", "-u", "127.0.0.1:8000", "--percentile=95", "-p", "1000"}, tc.args...)
				code, stdout, stderr := runPAMem(t, &mem, args...)
				if code != exitcode.OK {
					t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
				}
				golden(t, filepath.Join("testdata", "pa", tc.name+".golden"), stdout)
				o := paSections(stdout)
				var probed, reported []string
				for _, b := range o.blocks {
					probed = append(probed, strings.TrimPrefix(b[0], "Request concurrency: "))
				}
				for _, l := range o.summary[1:] {
					reported = append(reported, strings.TrimSuffix(strings.Fields(l)[1], ","))
				}
				if strings.Join(probed, " ") != tc.levels || strings.Join(reported, " ") != tc.summary {
					t.Errorf("probed %v, reported %v", probed, reported)
				}
				over := strings.Count(stderr, "Measured latency went over the set limit of 90 msec. \n")
				if over != len(probed)-len(reported) || !strings.Contains(stderr, "-l 90: concurrency 4 meets p95 < 90ms") {
					t.Errorf("stderr:\n%s", stderr)
				}
				capture, err := os.ReadFile(paCaptures + tc.name + ".txt")
				if err != nil {
					t.Fatal(err)
				}
				theirs := paSections(string(capture))
				// The capture stabilized on the average; here on p95.
				if shapes(o.settings[:4])+shapes(o.settings[5:]) != shapes(theirs.settings[:4])+shapes(theirs.settings[5:]) {
					t.Errorf("settings:\n%s\nperf_analyzer's:\n%s", strings.Join(o.settings, "\n"), strings.Join(theirs.settings, "\n"))
				}
			})
		})
	}
}

// -v prints a pass line per window; the level it reports and the CSV
// follow --percentile (a percentile of its own gets its own column).
func TestPAVerboseAndPercentile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, nil)
		dir := t.TempDir()
		csv := filepath.Join(dir, "v.csv")
		code, stdout, stderr := runPAMem(t, &mem, "-v", "-m", "simple", "-u", "127.0.0.1:8000", "-p", "1000", "--percentile=85",
			"-f", csv, "--verbose-csv", "-H", "X-Team:perf")
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		for _, want := range []string{
			"  Pass [1] throughput: ", " infer/sec. p85 latency: 20000 usec\n",
			"    p85 latency: 20000 usec\n",
			"Avg HTTP time: 20000 usec (send 0 usec + response wait 20000 usec + receive 0 usec)",
			"Inferences/Second vs. Client p85 Batch Latency",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		b, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		if h := strings.SplitN(string(b), "\n", 2)[0]; h != "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p85 latency,p90 latency,p95 latency,p99 latency,request/response,response wait" {
			t.Errorf("header %s", h)
		}
	})
}

// matchCapture compares perfscen pa's report with perf_analyzer's capture
// NAME, numbers masked: the settings verbatim, each level's Client and
// Server blocks and the summary line for line in shape; the CSV (csv, ""
// for none) with perf_analyzer's header verbatim and rows of its shape.
func matchCapture(t *testing.T, name, stdout, csv string) paOutput {
	t.Helper()
	return matchCaptureBut(t, name, stdout, csv, nil)
}

// matchCaptureBut is matchCapture less the capture's lines that start
// with one of drop (what perfscen documents it does not print), and with
// -v's Pass lines compared by shape, not by count (the windows a level
// takes to stabilize vary).
func matchCaptureBut(t *testing.T, name, stdout, csv string, drop []string) paOutput {
	t.Helper()
	capture, err := os.ReadFile(paCaptures + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := paSections(stdout), paSections(string(capture))
	for i := range ours.blocks {
		ours.blocks[i] = passesOnce(ours.blocks[i], nil)
	}
	for i := range theirs.blocks {
		theirs.blocks[i] = passesOnce(theirs.blocks[i], drop)
	}
	if strings.Join(ours.settings, "\n") != strings.Join(theirs.settings, "\n") {
		t.Errorf("settings:\n%s\nperf_analyzer:\n%s", strings.Join(ours.settings, "\n"), strings.Join(theirs.settings, "\n"))
	}
	if len(ours.blocks) == 0 || len(ours.blocks) < len(theirs.blocks)-1 {
		t.Fatalf("%d level(s) reported, perf_analyzer %d", len(ours.blocks), len(theirs.blocks))
	}
	for i, b := range ours.blocks {
		if got, want := shapes(b), shapes(theirs.blocks[0]); got != want {
			t.Errorf("level %d:\n%s\nperf_analyzer's:\n%s", i, got, want)
		}
	}
	if len(ours.summary) != len(ours.blocks)+1 || ours.summary[0] != theirs.summary[0] || shape(ours.summary[1]) != shape(theirs.summary[1]) {
		t.Errorf("summary:\n%s\nperf_analyzer's:\n%s", strings.Join(ours.summary, "\n"), strings.Join(theirs.summary, "\n"))
	}

	got, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(paCaptures + name + ".csv")
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(strings.TrimSpace(string(got)), "\n"), strings.Split(strings.TrimSpace(string(want)), "\n")
	if gl[0] != wl[0] {
		t.Errorf("CSV header:\n%s\nperf_analyzer's:\n%s", gl[0], wl[0])
	}
	for _, row := range gl[1:] {
		if shape(row) != shape(wl[1]) {
			t.Errorf("CSV row %q, perf_analyzer's %q", row, wl[1])
		}
	}
	if len(gl)-1 != len(ours.blocks) {
		t.Errorf("%d CSV rows for %d levels", len(gl)-1, len(ours.blocks))
	}
	return ours
}

// A sequence model needs no sequence flag: pa reads its sequence batcher
// from the model's configuration, as perf_analyzer does, and sends
// correlation ids with start and end flags, asynchronously, 20 requests a
// sequence; the report has perf_analyzer's "Sequence count" line.
func TestPASequenceModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, map[string]map[string]string{"simple_sequence": {"added_latency": "20ms"}})
		dir := t.TempDir()
		csv := filepath.Join(dir, "sequence.csv")
		code, stdout, stderr := runPAMem(t, &mem, "-m", "simple_sequence", "-u", "127.0.0.1:8000", "-p", "1000", "-s", "50", "-f", csv)
		if code != exitcode.OK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		matchCapture(t, "sequence", stdout, csv)
		var requests, sequences int
		for _, l := range strings.Split(stdout, "\n") {
			fmt.Sscanf(l, "    Request count: %d", &requests)
			fmt.Sscanf(l, "    Sequence count: %d", &sequences)
		}
		if requests == 0 || sequences < requests/20-1 || sequences > requests/20+1 {
			t.Errorf("%d requests in %d sequences, want 20 a sequence", requests, sequences)
		}

		file := filepath.Join(dir, "sequence.yaml")
		if code, _, stderr := runPAMem(t, &mem, "-m", "simple_sequence", "-u", "127.0.0.1:8000", "--emit-scenario", file); code != 0 {
			t.Fatalf("emit: exit %d: %s", code, stderr)
		}
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"    sequence: true   # the model's configuration has sequence_batching", "  async: true   # perf_analyzer calls a sequence model asynchronously"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("emitted scenario lacks %q:\n%s", want, body)
			}
		}

		// perf_analyzer's rule for an open range on a sequence model.
		code, _, stderr = runPAMem(t, &mem, "-m", "simple_sequence", "-u", "127.0.0.1:8000", "--concurrency-range", "1:0", "-l", "50")
		if code != exitcode.Invalid || !strings.Contains(stderr, "The 'end' concurrency can not be 0 for sequence models when using asynchronous API.") {
			t.Errorf("open range: exit %d: %s", code, stderr)
		}
		code, _, stderr = runPAMem(t, &mem, "-m", "simple_sequence", "-u", "127.0.0.1:8000", "-b", "2")
		if code != exitcode.Invalid || !strings.Contains(stderr, "can not specify batch size > 1 when using a sequence model") {
			t.Errorf("-b 2: exit %d: %s", code, stderr)
		}
	})
}

// A synchronous open range ends at --max-threads, with perf_analyzer's
// warning, in the emitted scenario as in a run.
func TestPAOpenRangeEndsAtMaxThreads(t *testing.T) {
	file := filepath.Join(t.TempDir(), "open.yaml")
	code, _, stderr := runCLI(t, "pa", "-m", "simple", "-u", "127.0.0.1:1", "--concurrency-range", "1:0", "-l", "50", "--max-threads", "8", "--emit-scenario", file)
	if code != 0 || !strings.Contains(stderr, "WARNING: The maximum attainable concurrency will be limited by max_threads specification.\n") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `concurrency: "1:8:1"`) || strings.Contains(stderr, "changes nothing") {
		t.Errorf("stderr %s\nscenario:\n%s", stderr, body)
	}
}

// passesOnce keeps one of a block's -v Pass lines and leaves out the lines
// that start with one of drop.
func passesOnce(block, drop []string) []string {
	var out []string
	pass := false
next:
	for _, l := range block {
		for _, d := range drop {
			if strings.HasPrefix(strings.TrimSpace(l), d) {
				continue next
			}
		}
		if strings.HasPrefix(l, "  Pass [") {
			if pass {
				continue
			}
			pass = true
		}
		out = append(out, l)
	}
	return out
}

// The other perf_analyzer captures: a request-rate sweep over gRPC, a
// request count, and -v with a percentile and --verbose-csv, each run
// unchanged but for the host (the reference server in memory, on the
// fake clock) and compared with perf_analyzer's report and CSV, numbers
// masked.
func TestPACapturesMatchPerfAnalyzer(t *testing.T) {
	tests := []struct {
		name string
		args []string
		drop []string // capture lines perfscen documents it does not print
	}{
		{"rate", []string{"-m", "simple", "-u", "127.0.0.1:8001", "-i", "grpc", "--request-rate-range", "10:40:10", "-p", "1000", "-s", "50"}, nil},
		{"count", []string{"-m", "simple", "-u", "127.0.0.1:8000", "--request-count", "40"}, nil},
		// perfscen does not measure the client's own overhead.
		{"verbose", []string{"-v", "-m", "simple", "-u", "127.0.0.1:8000", "-p", "1000", "-s", "50", "--percentile=90", "--verbose-csv"}, []string{"Avg client overhead:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				paServer(t, &mem, nil)
				csv := filepath.Join(t.TempDir(), tc.name+".csv")
				code, stdout, stderr := runPAMem(t, &mem, append(append([]string{}, tc.args...), "-f", csv)...)
				if code != exitcode.OK {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				ours := matchCaptureBut(t, tc.name, stdout, csv, tc.drop)
				if tc.name == "rate" && len(ours.blocks) != 4 {
					t.Errorf("%d rates measured, want 10, 20, 30, 40", len(ours.blocks))
				}
			})
		})
	}
}

// A level that falls behind its request rate gets perf_analyzer's two
// lines, over its 1% threshold: the send rate and the warning. On the fake
// clock one worker (--max-threads 1) serving 20 ms requests at a Poisson
// 30/s is busy when some sends are due (gaps shorter than 20 ms).
func TestPAKeepUpWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		paServer(t, &mem, nil)
		code, stdout, stderr := runPAMem(t, &mem, "-m", "simple", "-u", "127.0.0.1:8000", "--request-rate-range", "30",
			"--request-distribution", "poisson", "--max-threads", "1", "-p", "2000", "-s", "50")
		if code != exitcode.OK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		warn := regexp.MustCompile(`\n    Avg send request rate: [0-9]+\.[0-9]{2} infer/sec\n    \[WARNING\] Perf Analyzer was not able to keep up with the desired request rate\. [0-9]+\.[0-9]{2}% of the requests were delayed\. \n    Throughput: `)
		if !warn.MatchString(stdout) {
			t.Errorf("no keep-up warning in perf_analyzer's words:\n%s", stdout)
		}
	})
}
