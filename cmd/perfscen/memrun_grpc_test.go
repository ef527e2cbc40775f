package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// The gRPC quickstart on the fake clock: the embedded demo service at
// 10 ms a call passes; made twice as slow it fails, naming the checks.
func TestGRPCQuickstartOnTheFakeClock(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		want  int
		out   []string
	}{
		{name: "as built", want: 0, out: []string{"PASS", "predict/c=1", "generate/c=4"}},
		{name: "twice as slow", flags: []string{"--model-param", "delay.delay=20ms"}, want: 1,
			out: []string{"FAIL: 2 of 14 checks failed: p50 < 16ms @ predict/c=1; p50 < 64ms @ generate/c=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				flags := append([]string{"--no-baseline"}, tc.flags...)
				dir := runMemCase(t, "@scenarios/grpc-quickstart.yaml", flags, tc.want, tc.out...)
				run := readResult(t, filepath.Join(dir, "grpc-quickstart.json"))
				for _, p := range run.Points {
					if strings.HasPrefix(p.ID, "generate/") && (p.Summary.Responses == 0 || p.Summary.FirstResponseAvgUs <= 0) {
						t.Errorf("%s: no stream figures: %+v", p.ID, p.Summary)
					}
				}
			})
		})
	}
}

// Two builds of a gRPC service compared in one run, interleaved: equal
// builds pass, a candidate 40% slower fails naming both arms.
func TestGRPCServerABOnTheFakeClock(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data/predict.json"), `{"data": [{"message": {"model": "delay", "values": [1, 2]}}]}`)
	sc := writeFile(t, filepath.Join(dir, "ab.yaml"), `version: 1
name: grpc-ab
servers:
  released: {kind: grpc, embedded: true, grpc: {method: perfscen.demo.v1.Demo/Predict}}
  candidate: {kind: grpc, embedded: true, grpc: {method: perfscen.demo.v1.Demo/Predict}}
models:
  - {name: released/delay, input_data: data/predict.json}
  - {name: candidate/delay, input_data: data/predict.json}
load: {concurrency: 1}
measurement: {window: 300ms, stability: 50%, max_trials: 4, trials: 10, allow_unstable: true}
comparisons:
  - candidate/delay.p50 <= 1.15 * released/delay.p50
`)
	cases := []struct {
		name  string
		flags []string
		want  int
		out   string
	}{
		{name: "candidate equal", want: 0, out: "PASS"},
		{name: "candidate slower", flags: []string{"--model-param", "candidate/delay.delay=14ms"}, want: 1,
			out: "failed: candidate/delay-vs-released/delay-p50 <= 1.15 @ candidate/delay/c=1 vs released/delay/c=1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				runMemCase(t, sc, tc.flags, tc.want, tc.out)
			})
		})
	}
}

// Bad input stops the run before any load (no server needed), naming the
// place, and leaves nothing behind; an unreachable server is exit 3.
func TestGRPCKindRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "protos/bad.proto"), "syntax = \"proto3\";\npackage p;\nmessage M {\n  string a = 1\n}\n")
	writeFile(t, filepath.Join(dir, "protos/ok.proto"), "syntax = \"proto3\";\npackage p;\nmessage M { string a = 1; }\nservice S { rpc Call(M) returns (M); }\n")
	writeFile(t, filepath.Join(dir, "in.json"), "{\"data\": [\n  {\"message\": {\"b\": 1}}\n]}\n")
	scenario := func(name, grpcBlock, url string) string {
		return writeFile(t, filepath.Join(dir, name+".yaml"), "version: 1\nname: "+name+"\nserver:\n  kind: grpc\n  url: "+url+
			"\n  grpc: "+grpcBlock+"\nmodels:\n  - {name: m, input_data: in.json}\nload: {mode: iterations, iterations: 5}\n")
	}
	cases := []struct {
		name, grpc, url string
		code            int
		stderr          string
	}{
		{"proto does not compile", `{method: p.S/Call, proto_files: [protos/bad.proto], import_paths: [protos]}`, "127.0.0.1:1",
			exitcode.Invalid, filepath.Join(dir, "protos/bad.proto") + ":5:1: syntax error: expecting ';'"},
		{"no such method", `{method: p.S/Cal, proto_files: [protos/ok.proto], import_paths: [protos]}`, "127.0.0.1:1",
			exitcode.Invalid, "server.grpc.method (model m): service p.S has no method Cal (methods: Call)"},
		{"no such field", `{method: p.S/Call, proto_files: [protos/ok.proto], import_paths: [protos]}`, "127.0.0.1:1",
			exitcode.Invalid, filepath.Join(dir, "in.json") + `:2:16: data[0].message.b: no field "b" in p.M (fields: a)`},
		{"unreachable", `{method: p.S/Call}`, "127.0.0.1:1", exitcode.Environment, "grpc server at 127.0.0.1:1 not ready"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runCLI(t, "run", scenario("s", tc.grpc, tc.url), "-q", "--out-dir", out, "--connect-timeout", "300ms")
			// A run that got as far as a verdict says why once, in its
			// report's summary line; refused input says it on stderr.
			if code != tc.code || !strings.Contains(stdout+stderr, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant it to contain %q", code, tc.code, stderr, tc.stderr)
			}
			// Refused input leaves nothing; a run that could not measure
			// records why, as every kind's does.
			if entries, err := os.ReadDir(out); tc.code == exitcode.Invalid && err == nil && len(entries) > 0 {
				t.Errorf("files written: %v", entries)
			}
		})
	}
}

// perfscen serve --flavor grpc serves the demo service with reflection; a
// scenario of kind grpc measures it by URL.
func TestServeFlavorGRPC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--flavor", "grpc", "--endpoint", "grpc=127.0.0.1:0", "--model-param", "delay.delay=1ms"},
			strings.NewReader(""), &out, &errb)
	}()
	re := regexp.MustCompile(`Started grpc grpc at (\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("no address printed; stdout %q stderr %q", out.String(), errb.String())
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gen.json"), `{"data": [{"message": {"request": {"values": [1]}, "count": 2}, "expected_fields": {"[1].index": 1}}]}`)
	sc := writeFile(t, filepath.Join(dir, "s.yaml"), "version: 1\nname: served\nserver: {kind: grpc, url: \"grpc://"+addr+
		"\", grpc: {method: perfscen.demo.v1.Demo/Generate}}\nmodels: [{name: gen, input_data: gen.json, validate_outputs: true}]\nload: {mode: iterations, iterations: 10}\n")
	if code, stdout, stderr := runCLI(t, "run", sc, "-q", "--out-dir", t.TempDir()); code != exitcode.OK || !strings.Contains(stdout, "PASS") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitcode.OK {
			t.Fatalf("serve exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}
