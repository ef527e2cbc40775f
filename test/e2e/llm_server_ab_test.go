package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// The released and the candidate build of an OpenAI-compatible server in
// one run of the binary, here two embedded simulated engines on real
// time. Whether the run decides depends on how busy the machine is (a
// starved runner can leave a comparison inconclusive, exit 4), so what the
// data guarantees is asserted: equal engines are never failed, a
// candidate whose decode is twice as slow (higher inter-token latency,
// lower output tokens/s) is never passed, the exit code, recorded verdict
// and summary are the comparisons', each arm carries its server and LLM
// figures, and the two servers' trials are interleaved.
// TestLLMServerABOnTheFakeClock (cmd/perfscen) pins the decisions, pass
// and fail, on exact times.
func TestLLMServerAB(t *testing.T) {
	const sc = "testdata/llm-server-ab/ab.yaml"
	const where = " @ candidate/llm/c=4 vs released/llm/c=4"
	checks := []string{
		"candidate/llm-vs-released/llm-tpot_p50 <= 1.25",
		"candidate/llm-vs-released/llm-output_tokens_per_s >= 0.8",
	}
	cases := []struct {
		name    string
		flags   []string
		decided string // each comparison's status when the data decides
	}{
		{name: "candidate equal", decided: "pass"},
		{name: "candidate decode slower", flags: []string{"--model-param", "candidate/llm.decode_slowdown=2"}, decided: "fail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "-q", sc, "--out-dir", dir}, tc.flags...)
			code, stdout, stderr, run := runGated(t, filepath.Join(dir, "llm-server-ab-e2e.json"), args...)
			status := map[string]string{}
			for _, c := range run.Verdict.Checks {
				if c.Kind == "comparison" {
					status[c.Name] = c.Status
				}
			}
			// A failed comparison decides the run (1); else an undecided
			// one (4); else every comparison passed (0).
			wantCode, says := 0, []string{"PASS: "}
			for _, name := range checks {
				st := status[name]
				if st != tc.decided && st != "inconclusive" {
					t.Fatalf("comparison %s: %q, want %s or inconclusive; exit %d\nstdout:\n%s\nstderr:\n%s", name, st, tc.decided, code, stdout, stderr)
				}
				switch st {
				case "fail":
					wantCode = 1
				case "inconclusive":
					if wantCode == 0 {
						wantCode = 4
					}
				}
			}
			switch wantCode {
			case 1:
				says = nil
				for _, name := range checks {
					if status[name] == "fail" {
						says = append(says, name+where)
					}
				}
				says = append(says, "FAIL")
			case 4:
				says = []string{"INCONCLUSIVE", "undecided: "}
			}
			if code != wantCode || run.Verdict.ExitCode != code {
				t.Fatalf("comparisons %v: exit %d (verdict's %d), want %d\nstdout:\n%s\nstderr:\n%s", status, code, run.Verdict.ExitCode, wantCode, stdout, stderr)
			}
			for _, s := range says {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			// Each arm is labelled with its server, carries LLM figures,
			// and both servers are described.
			if len(run.Points) != 2 {
				t.Fatalf("%d points, want 2", len(run.Points))
			}
			want := map[string]string{"released/llm": "released", "candidate/llm": "candidate"}
			for _, p := range run.Points {
				if p.Server != want[p.Model] {
					t.Errorf("point %s of %s: server %q, want %q", p.ID, p.Model, p.Server, want[p.Model])
				}
				if p.Summary.LLM == nil || p.Summary.LLM.Streamed == 0 {
					t.Errorf("point %s has no LLM figures", p.ID)
				}
			}
			if len(run.Environment.Servers) != 2 {
				t.Errorf("environment servers: %+v, want two", run.Environment.Servers)
			}
			interleaved(t, run.Points[0], run.Points[1])
		})
	}
}

// Every LLM server is reached before any load: an unreachable candidate is
// exit 3, named, with nothing measured on the released server.
func TestLLMServerABUnreachable(t *testing.T) {
	checkUnreachableCandidate(t, "testdata/llm-server-ab/unreachable.yaml", filepath.Join(t.TempDir(), "llm-server-ab-unreachable.json"))
}
