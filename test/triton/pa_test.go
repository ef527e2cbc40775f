//go:build linux

package triton

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/testbin"
)

// runPA runs `perfscen pa` with args (expanded as scenarios are) in a
// fresh directory and returns its exit code, stdout, stderr and the CSV
// it wrote with -f pa.csv.
func runPA(t *testing.T, args ...string) (code int, stdout, stderr, csv string) {
	t.Helper()
	dir := t.TempDir()
	for i := range args {
		args[i] = expand(args[i])
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(testbin.Perfscen(t), append([]string{"pa", "-f", "pa.csv"}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pa.csv"))
	return code, out.String(), errb.String(), string(b)
}

// perf_analyzer command lines run unchanged against the real Triton, over
// HTTP, over gRPC with system shared memory or compressed requests, and in process through the C
// API, and print perf_analyzer's sections and CSV header (those perf_analyzer
// 2.46.0 printed for Triton 2.46; internal/pacompat/testdata). The subject
// is the output's shape, not the machine's steadiness: every line gets a
// stability band no busy runner leaves (-s 1000: windows within 11× of
// each other) and room to find it (-r 40), as a user on a busy runner
// would give them. With -s 80 the HTTP line ended exit 3 at load 20 (a
// window's p99 16 ms against a p50 of 283 µs).
func TestPAAgainstTriton(t *testing.T) {
	const serverCols = "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"http", []string{"-m", "identity_fp32", "-u", "{{HTTP}}", "--shape", "INPUT0:16", "--concurrency-range", "1:2", "-p", "500", "-s", "1000", "-r", "40"},
			[]string{"  Service Kind: TRITON\n", "Request concurrency: 2\n", "    Avg HTTP time: ", "  Server: \n", "Concurrency: 2, throughput: "}},
		{"grpc-shm", []string{"-m", "identity_fp32", "-u", "{{GRPC}}", "-i", "grpc", "--shape", "INPUT0:16", "--shared-memory", "system", "--concurrency", "2", "-p", "500", "-s", "1000", "-r", "40"},
			[]string{"Request concurrency: 2\n", "    Avg gRPC time: ", "    Successful request count: "}},
		// Triton's gRPC server reads deflate (zlib) messages as gRPC's C
		// core writes them; a request it could not read fails the run.
		{"grpc-deflate", []string{"-m", "identity_fp32", "-u", "{{GRPC}}", "-i", "grpc", "--shape", "INPUT0:16", "--grpc-compression-algorithm", "deflate", "-p", "500", "-s", "1000", "-r", "40"},
			[]string{"Request concurrency: 1\n", "    Avg gRPC time: ", "    Successful request count: "}},
		{"c-api", []string{"--service-kind=triton_c_api", "--triton-server-directory", triDir, "--model-repository", "{{REPO}}", "-m", "identity_fp32", "--shape", "INPUT0:16", "-p", "1000", "-s", "1000", "-r", "40"},
			[]string{"  Service Kind: TRITON_C_API\n", "    p99 latency: ", "\n    \n  Server: \n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr, csv := runPA(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			for _, w := range append(tc.want, "*** Measurement Settings ***\n", "  Client: \n", "Inferences/Second vs. Client Average Batch Latency\n") {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if h := strings.SplitN(csv, "\n", 2)[0]; h != serverCols {
				t.Errorf("CSV header %q", h)
			}
		})
	}
}
