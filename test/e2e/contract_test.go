package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// The exit-code contract (README "Exit codes"), held by runs of the built
// binary against the embedded server and an unreachable address:
//
//	0 every check passed
//	1 a check failed on measured data
//	2 invalid scenario, data, baseline or command line
//	3 could not measure: unreachable, a point where no request succeeded,
//	  unstable, interrupted
//	4 inconclusive
//
// and across several scenarios: 1 if any failed on data, else 2, else 3,
// else 4, else 0, with every scenario's outputs written.
func TestExitCodeContract(t *testing.T) {
	const dir = "testdata/contract/"
	cases := []struct {
		name   string
		files  []string
		flags  []string
		want   int
		stdout []string // must appear on stdout
		stderr []string // must appear on stderr
		never  []string // must appear nowhere
		outs   []string // result files written under the out dir
		none   bool     // nothing may be written: refused before any load
		extra  []string // other files written under the out dir
	}{
		{name: "pass", files: []string{"pass"}, want: 0, stdout: []string{"PASS"}, outs: []string{"pass.json"}},
		{name: "invalid scenario", files: []string{"invalid"}, want: 2, stderr: []string{"invalid.yaml:"}},
		// Problem 2: a point where every request failed is not measured,
		// in every load mode, and says what the server answered.
		{name: "nothing succeeded, iterations", files: []string{"refused-iterations"}, want: 3,
			stdout: []string{"COULD NOT MEASURE", "injected failure"}, never: []string{"PASS"}},
		{name: "nothing succeeded, time windows", files: []string{"refused-time"}, want: 3,
			stdout: []string{"COULD NOT MEASURE", "injected failure"}, never: []string{"PASS", "did not stabilize"}},
		{name: "nothing succeeded, count windows", files: []string{"refused-count"}, want: 3,
			stdout: []string{"COULD NOT MEASURE", "injected failure"}, never: []string{"PASS"}},
		{name: "nothing succeeded, grpc streaming", files: []string{"refused-streaming"}, want: 3,
			stdout: []string{"COULD NOT MEASURE", "no request succeeded", "injected failure"}, never: []string{"PASS"}},
		// The default error budget is 0 in every mode, threshold or not.
		{name: "errors over the budget", files: []string{"some-errors"}, want: 1,
			stdout: []string{"FAIL", "error rate <= 0%", "over the error budget", "injected failure"}},
		{name: "errors within max_error_rate", files: []string{"within-budget"}, want: 0,
			stdout: []string{"PASS", "within the error budget of 60%"}},
		{name: "wrong outputs", files: []string{"wrong-outputs"}, want: 1, stdout: []string{"FAIL", "outputs match validation data"}},
		{name: "unreachable", files: []string{"unreachable"}, flags: []string{"--connect-timeout", "300ms"}, want: 3,
			stdout: []string{"COULD NOT MEASURE"}, outs: []string{"unreachable.json"}},
		// Problem 7: a demonstrated failure is never hidden by another
		// scenario's environment failure, and both get their outputs.
		{name: "unreachable and wrong outputs", files: []string{"unreachable", "wrong-outputs"},
			flags: []string{"--connect-timeout", "300ms"}, want: 1,
			stdout: []string{"COULD NOT MEASURE", "FAIL"}, outs: []string{"unreachable.json", "wrong-outputs.json"}},
		{name: "invalid and unreachable", files: []string{"invalid", "unreachable"},
			flags: []string{"--connect-timeout", "300ms"}, want: 2, outs: []string{"unreachable.json"}},
		{name: "pass and unreachable", files: []string{"pass", "unreachable"},
			flags: []string{"--connect-timeout", "300ms"}, want: 3, outs: []string{"pass.json", "unreachable.json"}},
		// Problem 9: a parameter the model does not have is refused
		// before the server starts, as validate refuses it.
		{name: "parameter the model lacks", files: []string{"pass"}, flags: []string{"--model-param", "simple.slowdown=3"},
			want: 2, stderr: []string{`"slowdown"`, "does not use it"}, none: true},
		// Problems 7 and 8: what would go wrong after the load is refused
		// before it: duplicate names, an output that cannot be written.
		{name: "duplicate scenario names", files: []string{"dup/one", "dup/two"}, want: 2,
			stderr: []string{`both named "same"`}, none: true},
		{name: "junit path not writable", files: []string{"pass"}, flags: []string{"--junit", dir + "pass.yaml/junit.xml"},
			want: 2, stderr: []string{"--junit"}, none: true},
		// Problem 8: several models in --csv give one file each, and the
		// outputs after it are written.
		{name: "csv with two models", files: []string{"two-models"}, flags: []string{"--csv", "@/pa.csv", "--markdown", "@/s.md"},
			want: 0, stdout: []string{"PASS"}, extra: []string{"pa.a.csv", "pa.b.csv", "s.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"run", "-q", "--out-dir", out, "--junit", filepath.Join(out, "junit.xml")}
			for _, fl := range tc.flags {
				args = append(args, strings.Replace(fl, "@", out, 1))
			}
			for _, f := range tc.files {
				args = append(args, dir+f+".yaml")
			}
			code, stdout, stderr := perfscen(t, args...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			for _, s := range tc.never {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("output says %q:\n%s\n%s", s, stdout, stderr)
				}
			}
			if tc.none {
				if left, _ := os.ReadDir(out); len(left) > 0 {
					t.Errorf("written before refusing: %v", left)
				}
			}
			for _, name := range tc.extra {
				if _, err := os.Stat(filepath.Join(out, name)); err != nil {
					t.Errorf("%s not written: %v", name, err)
				}
			}
			for _, name := range tc.outs {
				if _, err := result.ReadFile(filepath.Join(out, name)); err != nil {
					t.Errorf("result %s: %v", name, err)
				}
				junit := filepath.Join(out, "junit.xml")
				if len(tc.files) > 1 {
					junit = filepath.Join(out, "junit."+strings.TrimSuffix(name, ".json")+".xml")
				}
				if _, err := os.Stat(junit); err != nil {
					t.Errorf("junit for %s: %v", name, err)
				}
			}
		})
	}
}
