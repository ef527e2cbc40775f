package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

// Comparisons apply to LLM figures as to any other, in a run of the
// binary on real time: the engine with the four times faster decode is
// never failed on "output tokens/s ≥ 1.3 ×" the other's, the same check is
// never passed once the candidate is made slower, and the two engines'
// trials are interleaved. Whether the run decides depends on how busy the
// machine is (a starved runner can leave it inconclusive, exit 4), so the
// exit code and summary are asserted to be the comparison's;
// TestLLMComparisonOnTheFakeClock (cmd/perfscen) pins the decisions, pass
// and fail (exit 1, not skipped, not could-not-measure), on exact times.
func TestLLMComparisonEndToEnd(t *testing.T) {
	const scenario = "testdata/llm/compare.yaml"
	const check = "fp8-vs-fp16-output_tokens_per_s >= 1.3"
	cases := []struct {
		name    string
		flags   []string
		decided string // the comparison's status when the data decides
	}{
		{"candidate faster", nil, "pass"},
		{"candidate slower", []string{"--model-param", "llm_fp8.decode_slowdown=8"}, "fail"},
	}
	outcomes := map[string]struct {
		code int
		says string
	}{
		"pass":         {0, "PASS: "},
		"fail":         {1, "failed: " + check + " @ fp8/c=4 vs fp16/c=4"},
		"inconclusive": {4, "undecided: " + check + " @ fp8/c=4 vs fp16/c=4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "-q", "--out-dir", out}, tc.flags...)
			code, stdout, stderr := perfscen(t, append(args, scenario)...)
			run, err := result.ReadFile(filepath.Join(out, "llm-compare.json"))
			if err != nil {
				t.Fatalf("exit %d: %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
			}
			if run.Verdict == nil {
				t.Fatal("result has no verdict")
			}
			status := ""
			for _, c := range run.Verdict.Checks {
				if c.Kind == "comparison" {
					if c.Name != check || c.Metric != "output_tokens_per_s" {
						t.Errorf("comparison %s on metric %q", c.Name, c.Metric)
					}
					status = c.Status
				}
			}
			if status != tc.decided && status != "inconclusive" {
				t.Fatalf("comparison %q, want %s or inconclusive; exit %d\nstdout:\n%s\nstderr:\n%s", status, tc.decided, code, stdout, stderr)
			}
			want := outcomes[status]
			if code != want.code || run.Verdict.ExitCode != code || !strings.Contains(stdout, want.says) {
				t.Fatalf("comparison %s: exit %d (verdict's %d), want %d with %q\nstdout:\n%s\nstderr:\n%s",
					status, code, run.Verdict.ExitCode, want.code, want.says, stdout, stderr)
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
