package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

// Comparisons apply to LLM figures as to any other: the faster engine's
// output tokens/s passes "≥ 1.3 ×" the slower one's, the same check fails
// (exit 1, not skipped, not could-not-measure) once the candidate is made
// slower, and the two engines' trials are interleaved.
func TestLLMComparisonEndToEnd(t *testing.T) {
	const scenario = "testdata/llm/compare.yaml"
	cases := []struct {
		name  string
		flags []string
		want  int
		says  string
	}{
		{"candidate faster", nil, 0, "PASS"},
		{"candidate slower", []string{"--model-param", "llm_fp8.decode_slowdown=8"}, 1, "FAIL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "-q", "--out-dir", out}, tc.flags...)
			code, stdout, stderr := perfscen(t, append(args, scenario)...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.says) || !strings.Contains(stdout, "fp8-vs-fp16-output_tokens_per_s") {
				t.Errorf("stdout lacks %q or the comparison:\n%s", tc.says, stdout)
			}
			run, err := result.ReadFile(filepath.Join(out, "llm-compare.json"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict == nil {
				t.Fatal("result has no verdict")
			}
			var found bool
			for _, c := range run.Verdict.Checks {
				if c.Kind == "comparison" {
					found = true
					if c.Metric != "output_tokens_per_s" {
						t.Errorf("comparison %s on metric %q", c.Name, c.Metric)
					}
					if (c.Status == "pass") != (tc.want == 0) || (c.Status == "fail") != (tc.want == 1) {
						t.Errorf("comparison %s: status %s", c.Name, c.Status)
					}
				}
			}
			if !found {
				t.Fatalf("no comparison check in the verdict: %+v", run.Verdict.Checks)
			}
			if len(run.Points) != 2 {
				t.Fatalf("%d points, want 2", len(run.Points))
			}
			interleaved(t, run.Points[0], run.Points[1])
		})
	}
}

// interleaved checks that b's kept trials alternate with a's in time:
// trial i of b starts after trial i of a and before trial i+1 of a.
func interleaved(t *testing.T, a, b result.Point) {
	t.Helper()
	if len(a.Trials) < 2 || len(a.Trials) != len(b.Trials) {
		t.Fatalf("trials: %d of %s, %d of %s; want as many, at least 2", len(a.Trials), a.ID, len(b.Trials), b.ID)
	}
	for i := range b.Trials {
		if !b.Trials[i].Start.After(a.Trials[i].Start) || (i+1 < len(a.Trials) && !b.Trials[i].Start.Before(a.Trials[i+1].Start)) {
			t.Fatalf("trial %d of %s is not between trials %d and %d of %s", i, b.ID, i, i+1, a.ID)
		}
	}
}
