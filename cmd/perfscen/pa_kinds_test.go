package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/kinds"
	grpckind "github.com/perfscen/perfscen/internal/kinds/grpc"
	"github.com/perfscen/perfscen/internal/kinds/openai"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/scenario"
)

// The seeds' OpenAI and dynamic gRPC command lines, each with the model or
// method changed to one the embedded servers have (as the Triton seeds'
// model is changed to simple), and the input data they read.
var paKindSeeds = []struct {
	name string
	args []string
	// file is the --input-data file the line names, written in the
	// test's folder, and its contents.
	file, data string
	// kind is the banner's service kind; level the client library line.
	kind, level string
	csv         string
}{
	{
		name: "openai",
		// perf_analyzer -m facebook/opt-125m --service-kind=openai --endpoint=v1/chat/completions --async --input-data=input_data.json
		args: []string{"-m", "llm", "--service-kind=openai", "--endpoint=v1/chat/completions", "--async", "--input-data=input_data.json"},
		file: "input_data.json",
		data: `{"data": [
  {"payload": [{"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8, "ignore_eos": true, "stream": true}]},
  {"payload": [{"messages": [{"role": "user", "content": "Count to four."}], "max_tokens": 12, "ignore_eos": true, "stream": true}]}
]}`,
		kind:  "  Service Kind: OPENAI",
		level: "    Avg HTTP time: N usec (send/recv N usec + response wait N usec)",
		csv:   "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency",
	},
	{
		name: "dynamic_grpc",
		// perf_analyzer --service-kind=dynamic_grpc -u=localhost:8001 --input-data=inputs.json --grpc-method=v1.Simple/Echo
		args:  []string{"--service-kind=dynamic_grpc", "-u=localhost:8001", "--input-data=inputs.json", "--grpc-method=perfscen.demo.v1.Demo/Predict"},
		file:  "inputs.json",
		data:  `{"data": [{"message": {"model": "delay", "values": [1, 2, 3, 4]}}]}`,
		kind:  "  Service Kind: DYNAMIC_GRPC",
		level: "    Avg gRPC time: N usec ((un)marshal request/response N usec + response wait N usec)",
		csv:   "Concurrency,Inferences/Second,Client Send,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency",
	},
}

// paKindServer serves, on mem, the embedded OpenAI-compatible server at
// localhost:8000 (perf_analyzer's default address) and the embedded gRPC
// demo service at localhost:8001.
func paKindServer(t *testing.T, mem *memnet.Network) {
	t.Helper()
	s, err := refserver.New(refserver.Options{HTTPAddr: "localhost:8000", GRPCAddr: "-", Listen: mem.Listen,
		PlainTimers: true, ShutdownGrace: 200e6, Mounts: []refserver.Mount{openai.Mount()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	core, err := refserver.New(refserver.Options{HTTPAddr: "-", GRPCAddr: "-", PlainTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	fe, err := grpckind.Kind{}.ServeFlavour(context.Background(), core, map[string]string{"grpc": "localhost:8001"}, mem.Listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close(); core.Close() })
}

// runPAMemRun runs an emitted scenario on mem.
func runPAMemRun(t *testing.T, mem *memnet.Network, file, dir string) (int, string, string) {
	t.Helper()
	return runAtRoot(t, &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, "run", "-q", file, "--out-dir", dir)
}

// The seeds' OpenAI and dynamic gRPC lines run unchanged but for the
// model (or method), against the embedded servers on the fake clock:
// perf_analyzer's settings banner with the service kind, one level with
// the Client block and the client library line of the kind, the closing
// summary, and the -f CSV with perf_analyzer's header for a kind without
// server statistics. The emitted scenario validates and plans the same
// load.
func TestPAKindSeeds(t *testing.T) {
	for _, seed := range paKindSeeds {
		t.Run(seed.name, func(t *testing.T) {
			dir := t.TempDir()
			data := writeFile(t, filepath.Join(dir, seed.file), seed.data)
			// The line names its input data in the folder it runs in.
			args := make([]string, len(seed.args))
			for i, a := range seed.args {
				args[i] = strings.Replace(a, "="+seed.file, "="+data, 1)
			}
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				paKindServer(t, &mem)
				export := filepath.Join(dir, "export.json")
				code, stdout, stderr := runPAMem(t, &mem, append(append([]string{}, args...), "-f", filepath.Join(dir, "out.csv"), "--profile-export-file", export)...)
				if code != exitcode.OK {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				o := paSections(stdout)
				if len(o.settings) < 2 || o.settings[1] != seed.kind || strings.Contains(stdout, "Batch size") {
					t.Errorf("settings:\n%s", strings.Join(o.settings, "\n"))
				}
				if len(o.blocks) != 1 {
					t.Fatalf("%d levels, want concurrency 1:\n%s", len(o.blocks), stdout)
				}
				want := []string{"Request concurrency: N", "  Client: ", "    Request count: N", "    Throughput: N infer/sec",
					"    Avg latency: N usec (standard deviation N usec)", "    pN latency: N usec", "    pN latency: N usec",
					"    pN latency: N usec", "    pN latency: N usec", seed.level}
				if got := shapes(o.blocks[0]); got != strings.Join(want, "\n") {
					t.Errorf("level:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
				}
				if len(o.summary) != 2 || o.summary[0] != "Inferences/Second vs. Client Average Batch Latency" ||
					shape(o.summary[1]) != "Concurrency: N, throughput: N infer/sec, latency N usec" {
					t.Errorf("summary:\n%s", strings.Join(o.summary, "\n"))
				}
				b, err := os.ReadFile(filepath.Join(dir, "out.csv"))
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				if len(lines) != 2 || lines[0] != seed.csv || shape(lines[1]) != "N,N,N,N,N,N,N,N" {
					t.Errorf("CSV:\n%s", b)
				}

				imported := filepath.Join(dir, "imported.json")
				if code, stdout, stderr := runCLI(t, "import", "--model", "m", "--service-kind", seed.name, "-o", imported, filepath.Join(dir, "out.csv")); code != 0 || !strings.Contains(stdout, "imported") {
					t.Errorf("perfscen import of the CSV: exit %d\n%s%s", code, stdout, stderr)
				}
				requests := readExport(t, export, seed.name, "concurrency", 1)
				if n := paRequestCount(stdout); requests < n {
					t.Errorf("the export holds %d requests, the kept windows %d", requests, n)
				}

				// --emit-scenario: the same line as a scenario that
				// validates and plans the same load.
				file := filepath.Join(dir, seed.name+".yaml")
				code, _, stderr = runPAMem(t, &mem, append(append([]string{}, args...), "--emit-scenario", file)...)
				if code != 0 || !strings.Contains(stderr, "loaded back and valid") {
					t.Fatalf("emit: exit %d: %s", code, stderr)
				}
				body, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, filepath.Join("testdata", "pa", seed.name+".yaml"), strings.ReplaceAll(string(body), dir, "DIR"))
				if code, stdout, stderr := runCLI(t, "validate", file); code != 0 {
					t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
				}
				pl, err := scenario.LoadPlanWith(file, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(pl.Points) != 1 || pl.Points[0].Load.Concurrency != 1 || pl.Measurement.Window != 5e9 || pl.Measurement.Trials != 3 {
					t.Errorf("emitted plan: %d points, first %+v, measurement %+v", len(pl.Points), pl.Points[0].Load, pl.Measurement)
				}
				code, stdout, stderr = runPAMemRun(t, &mem, file, dir)
				if code != 0 || !strings.Contains(stdout, "PASS") {
					t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
				}
			})
		})
	}
}
