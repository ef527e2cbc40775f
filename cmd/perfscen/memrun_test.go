package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
)

// runMem is runCLI with the embedded servers and their clients on an
// in-memory network. Called inside testing/synctest, the run is on the
// fake clock: a model's 10 ms service time is exactly 10 ms in every
// window, however busy the machine is, so the figures, and the verdict on
// them, are the same on every run.
func runMem(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var mem memnet.Network
	return runAtRoot(t, &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, args...)
}

// runMemCase runs scenario (an @path) with flags by runMem, writing into
// a fresh directory it returns, and checks the exit code is want and
// stdout says each of out.
func runMemCase(t *testing.T, scenario string, flags []string, want int, out ...string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	args := append([]string{"run", "-q", scenario, "--out-dir", dir}, flags...)
	code, stdout, stderr := runMem(t, args...)
	if code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	for _, s := range out {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	return dir
}

// The server A/B scenario of test/e2e on the fake clock: two embedded
// servers, interleaved trials, equal builds pass and a candidate 40%
// slower fails naming both arms. On real time these decisions depend on
// how busy the machine is (a starved runner makes the data inconclusive,
// which is the right answer there); here they are exact.
func TestServerABOnTheFakeClock(t *testing.T) {
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
				dir := runMemCase(t, "@test/e2e/testdata/server-ab/ab.yaml", tc.flags, tc.want, tc.out)
				run := readResult(t, filepath.Join(dir, "server-ab-e2e.json"))
				for _, p := range run.Points {
					if len(p.Trials) != 10 {
						t.Errorf("%s: %d trials, want the 10 asked for (decided at the first look)", p.ID, len(p.Trials))
					}
				}
			})
		})
	}
}

// The LLM comparison of test/e2e on the fake clock: the simulated engine
// whose decode is four times faster passes "output tokens/s ≥ 1.3 ×" the
// other's, and fails it once made eight times slower, at the first look.
func TestLLMComparisonOnTheFakeClock(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		want  int
		out   string
	}{
		{name: "candidate faster", want: 0, out: "PASS"},
		{name: "candidate slower", flags: []string{"--model-param", "llm_fp8.decode_slowdown=8"}, want: 1,
			out: "failed: fp8-vs-fp16-output_tokens_per_s >= 1.3 @ fp8/c=4 vs fp16/c=4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				runMemCase(t, "@test/e2e/testdata/llm/compare.yaml", tc.flags, tc.want, tc.out)
			})
		})
	}
}
