package main

import (
	"os"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// runCLI runs perfscen from the repository root, so paths in the output
// read as a user would type them.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runAtRoot(t, nil, args...)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     []string // lines that must appear
		stderr     []string
		noStdout   bool
		errorLines int // -1: don't count
	}{
		{
			// The Triton scenarios name files beside the checkout: they
			// are checked on their own below.
			name:       "examples directory",
			args:       []string{"validate", "@scenarios"},
			code:       tritonFiles(),
			stdout:     []string{"ok  scenarios/quickstart.yaml", "ok  scenarios/engine-comparison.yaml", "ok  scenarios/triton-trt-vs-onnx.yaml", "ok  scenarios/triton-grpc-shm-sweep.yaml"},
			errorLines: -1,
		},
		{
			// Paths a server block names are checked as run checks them,
			// at the key's line.
			name: "paths in server blocks",
			args: []string{"validate", "@cmd/perfscen/testdata/paths/capi.yaml", "@cmd/perfscen/testdata/paths/capi-library.yaml",
				"@cmd/perfscen/testdata/paths/grpc.yaml", "@cmd/perfscen/testdata/paths/tls.yaml", "@cmd/perfscen/testdata/paths/tls-pem.yaml"},
			code: exitcode.Invalid,
			stderr: []string{
				"cmd/perfscen/testdata/paths/capi.yaml:8:5: server.triton_c_api.model_repository: cmd/perfscen/testdata/paths/no-such-repository is not a folder\n",
				"cmd/perfscen/testdata/paths/capi-library.yaml:7:5: server.triton_c_api.library: stat cmd/perfscen/testdata/paths/no-such-lib/libtritonserver.so: no such file or directory\n",
				"cmd/perfscen/testdata/paths/grpc.yaml:9:19: server.grpc.proto_files[0]: no-such.proto: no such file, here or under the import paths (cmd/perfscen/testdata/paths)\n",
				"cmd/perfscen/testdata/paths/tls.yaml:7:14: server.tls.ca_file: open cmd/perfscen/testdata/paths/no-such-ca.pem: no such file or directory\n",
				"cmd/perfscen/testdata/paths/tls-pem.yaml:6:3: server.tls: tls ca cmd/perfscen/testdata/paths/tls.yaml: no PEM certificates found\n",
			},
			noStdout:   true,
			errorLines: 5,
		},
		{
			name:   "one valid, one invalid",
			args:   []string{"validate", "@scenarios/quickstart.yaml", "@scenario/testdata/invalid/three-mistakes.yaml"},
			code:   exitcode.Invalid,
			stdout: []string{"ok  scenarios/quickstart.yaml"},
			stderr: []string{
				"scenario/testdata/invalid/three-mistakes.yaml:7:17: models[0].batch_size: must be >= 1 but found 0",
				"scenario/testdata/invalid/three-mistakes.yaml:9:3: load.concurency: unknown field `concurency` (did you mean `concurrency`?)",
				`scenario/testdata/invalid/three-mistakes.yaml:11:11: measurement.window: "5 sec" is not a duration (examples: 500ms, 5s)`,
			},
			errorLines: 3,
		},
		{
			// OpenAI input-data files are opened: a syntax error at its
			// line, a wrong entry by its JSON path, under the YAML line.
			name: "bad OpenAI payload files",
			args: []string{"validate", "@internal/kinds/openai/testdata/bad-payloads.yaml"},
			code: exitcode.Invalid,
			stderr: []string{
				"internal/kinds/openai/testdata/bad-payloads.yaml:7:17: models[0].input_data: internal/kinds/openai/testdata/openai-syntax.json:3: invalid character ','",
				`internal/kinds/openai/testdata/bad-payloads.yaml:9:17: models[1].input_data: internal/kinds/openai/testdata/openai-nomessages.json:3: data[1].payload[0]: a v1/chat/completions request needs a non-empty "messages" list`,
			},
			noStdout:   true,
			errorLines: 2,
		},
		{
			name:       "missing file",
			args:       []string{"validate", "@scenarios/nope.yaml"},
			code:       exitcode.Invalid,
			stderr:     []string{"no such file or directory"},
			noStdout:   true,
			errorLines: -1,
		},
		{
			name:       "directory without scenarios",
			args:       []string{"validate", "@scenario/testdata/valid/data"},
			code:       exitcode.Invalid,
			stderr:     []string{"no *.yaml or *.yml scenario files"},
			noStdout:   true,
			errorLines: -1,
		},
		{
			name:       "no arguments",
			args:       []string{"validate"},
			code:       exitcode.Invalid,
			errorLines: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			for _, l := range tt.stdout {
				if !strings.Contains(out, l+"\n") {
					t.Errorf("stdout lacks %q:\n%s", l, out)
				}
			}
			for _, l := range tt.stderr {
				if !strings.Contains(errOut, l) {
					t.Errorf("stderr lacks %q:\n%s", l, errOut)
				}
			}
			if tt.noStdout && out != "" {
				t.Errorf("unexpected stdout %q", out)
			}
			if tt.errorLines >= 0 {
				if n := strings.Count(errOut, "\n"); n != tt.errorLines {
					t.Errorf("%d stderr lines, want %d:\n%s", n, tt.errorLines, errOut)
				}
			}
		})
	}
}

func TestValidateHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"validate", "plan"} {
		code, out, _ := runCLI(t, cmd, "--help")
		if code != exitcode.OK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "perfscen "+cmd+" scenarios/") {
			t.Errorf("%s --help: exit %d, output:\n%s", cmd, code, out)
		}
	}
}

// run refuses a bad OpenAI payload file as validate does: exit 2, the
// file's line, nothing measured or written.
func TestRunRefusesBadPayloadBeforeLoad(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "-q", "--out-dir", out, "@internal/kinds/openai/testdata/bad-payloads.yaml")
	if code != exitcode.Invalid || !strings.Contains(stderr, "openai-syntax.json:3: invalid character") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if left, _ := os.ReadDir(out); len(left) > 0 {
		t.Errorf("written: %v", left)
	}
}

// tritonFiles is validate's exit for scenarios/: the Triton scenarios
// name Triton's library beside the checkout (../shared/triton) and, for
// triton-protocol-cost, a writable copy of its models in /tmp/tri-models;
// without them they are refused, as run refuses them.
func tritonFiles() int {
	for _, p := range []string{"../../../shared/triton/lib/libtritonserver.so", "../../../shared/triton/models", "/tmp/tri-models"} {
		if _, err := os.Stat(p); err != nil {
			return exitcode.Invalid
		}
	}
	return exitcode.OK
}

// run refuses a path a server block names as validate does, at its line,
// before any load.
func TestRunRefusesBadPathsBeforeLoad(t *testing.T) {
	for _, f := range []string{"capi", "capi-library", "grpc", "tls", "tls-pem"} {
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, "run", "-q", "--out-dir", out, "@cmd/perfscen/testdata/paths/"+f+".yaml")
		if code != exitcode.Invalid || !strings.HasPrefix(stderr, "cmd/perfscen/testdata/paths/"+f+".yaml:") {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", f, code, stdout, stderr)
		}
		if left, _ := os.ReadDir(out); len(left) > 0 {
			t.Errorf("%s: written: %v", f, left)
		}
	}
}
