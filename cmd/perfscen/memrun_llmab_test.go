package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

// The LLM server A/B of test/e2e on the fake clock: two embedded
// OpenAI-compatible servers running the same simulated engine, arms
// named released/llm and candidate/llm, trials interleaved. Equal builds
// pass both comparisons; a candidate whose decode is twice as slow (higher
// inter-token latency, lower output tokens/s) fails both, at the first
// look with the 10 trials asked for. An unreachable candidate is exit 3
// with nothing measured on the released server.
func TestLLMServerABOnTheFakeClock(t *testing.T) {
	const (
		tpot = "failed: candidate/llm-vs-released/llm-tpot_p50 <= 1.25 @ candidate/llm/c=4 vs released/llm/c=4"
		toks = "candidate/llm-vs-released/llm-output_tokens_per_s >= 0.8 @ candidate/llm/c=4 vs released/llm/c=4"
	)
	cases := []struct {
		name   string
		flags  []string
		want   int
		status string
		out    []string
	}{
		{name: "candidate equal", want: 0, status: "pass", out: []string{"PASS: "}},
		{name: "candidate decode slower", flags: []string{"--model-param", "candidate/llm.decode_slowdown=2"}, want: 1, status: "fail",
			out: []string{tpot, toks}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := runMemCase(t, "@test/e2e/testdata/llm-server-ab/ab.yaml", tc.flags, tc.want, tc.out...)
				run := readResult(t, filepath.Join(dir, "llm-server-ab-e2e.json"))
				n := 0
				for _, c := range run.Verdict.Checks {
					if c.Kind == "comparison" {
						n++
						if c.Status != tc.status {
							t.Errorf("comparison %s: %s, want %s", c.Name, c.Status, tc.status)
						}
					}
				}
				if n != 2 {
					t.Errorf("%d comparisons, want 2", n)
				}
				servers := map[string]string{}
				for _, p := range run.Points {
					servers[p.Model] = p.Server
					if len(p.Trials) != 10 {
						t.Errorf("%s: %d trials, want the 10 asked for (decided at the first look)", p.ID, len(p.Trials))
					}
				}
				if servers["released/llm"] != "released" || servers["candidate/llm"] != "candidate" {
					t.Errorf("arms' servers: %v", servers)
				}
			})
		})
	}
	t.Run("candidate unreachable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runMem(t, "run", "-q", "@test/e2e/testdata/llm-server-ab/unreachable.yaml", "--out-dir", dir, "--connect-timeout", "300ms")
			if code != 3 || strings.Count(stdout+stderr, "server candidate") != 1 {
				t.Fatalf("exit %d, want 3 naming the server\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if run := readResult(t, filepath.Join(dir, "llm-server-ab-unreachable.json")); len(run.Points) != 0 {
				t.Errorf("%d point(s) measured before every server was reached", len(run.Points))
			}
		})
	})
}

// A scenario error of an LLM A/B is exit 2 from validate and from run
// alike, before any server is started, at the file:line of the odd entry.
func TestLLMServerABScenarioErrors(t *testing.T) {
	cases := []struct{ file, want string }{
		{"scenario/testdata/invalid/servers-llm-mixed.yaml",
			"scenario/testdata/invalid/servers-llm-mixed.yaml:5:11: servers.triton.kind: is kserve but servers.released is kind openai"},
		{"scenario/testdata/invalid/servers-llm.yaml",
			"scenario/testdata/invalid/servers-llm.yaml:6:5: servers.released.endpoint: is v1/chat/completions (the default) but servers.candidate.endpoint is v1/completions"},
	}
	for _, tc := range cases {
		for _, cmd := range []string{"validate", "run"} {
			t.Run(cmd+" "+filepath.Base(tc.file), func(t *testing.T) {
				args := []string{cmd, "@" + tc.file}
				if cmd == "run" {
					args = append(args, "--out-dir", t.TempDir())
				}
				code, stdout, stderr := runMem(t, args...)
				if code != 2 || !strings.Contains(stderr, tc.want) {
					t.Fatalf("exit %d, want 2 with\n%s\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
				}
			})
		}
	}
}

// Comparisons on fewer kept trials than a comparison can pass with are a
// scenario error, known before any load: validate and run both exit 2
// naming the key and the minimum, and run writes no result (before, the
// whole load ran and every comparison failed, exit 1).
func TestTooFewTrialsForComparisons(t *testing.T) {
	const file = "scenario/testdata/invalid/comparison-trials.yaml"
	const want = "scenario/testdata/invalid/comparison-trials.yaml:9:11: measurement.trials: 5 kept trial(s) per point are too few for comparisons: each arm needs at least 10"
	for _, cmd := range []string{"validate", "run"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{cmd, "@" + file}
			if cmd == "run" {
				args = append(args, "--out-dir", dir)
			}
			code, stdout, stderr := runMem(t, args...)
			if code != 2 || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d, want 2 with\n%s\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("a refused scenario left %d file(s) in the output folder", len(ents))
			}
		})
	}
}
