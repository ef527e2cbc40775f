package e2e

import (
	"path/filepath"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
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
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "-q", "--out-dir", out}, tc.flags...)
			code, stdout, stderr, run := runGated(t, filepath.Join(out, "llm-compare.json"), append(args, scenario)...)
			status := ""
			for _, c := range run.Verdict.Checks {
				if c.Kind == "comparison" {
					if c.Name != check || c.Metric != "output_tokens_per_s" {
						t.Errorf("comparison %s on metric %q", c.Name, c.Metric)
					}
					status = c.Status
				}
			}
			checkDecision(t, code, stdout, stderr, run, check, " @ fp8/c=4 vs fp16/c=4", status, tc.decided)
			if len(run.Points) != 2 {
				t.Fatalf("%d points, want 2", len(run.Points))
			}
			interleaved(t, run.Points[0], run.Points[1])
		})
	}
}

// interleaved checks that b's kept trials alternate with a's in time:
// trial i of b starts between trials i-1 and i+2 of a. A round is one
// window per point, so trial i of b follows trial i of a; but a window in
// which no request finished is passed over for the next window of the
// same session (the report notes it), which on a busy machine can move a
// kept trial one round on.
func interleaved(t *testing.T, a, b result.Point) {
	t.Helper()
	if len(a.Trials) < 2 || len(a.Trials) != len(b.Trials) {
		t.Fatalf("trials: %d of %s, %d of %s; want as many, at least 2", len(a.Trials), a.ID, len(b.Trials), b.ID)
	}
	for i := range b.Trials {
		if (i > 0 && !b.Trials[i].Start.After(a.Trials[i-1].Start)) || (i+2 < len(a.Trials) && !b.Trials[i].Start.Before(a.Trials[i+2].Start)) {
			t.Fatalf("trial %d of %s is not between trials %d and %d of %s", i, b.ID, i-1, i+2, a.ID)
		}
	}
}
