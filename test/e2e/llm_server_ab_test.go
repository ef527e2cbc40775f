package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

// The released and the candidate build of an OpenAI-compatible server in
// one run, here two embedded simulated engines: equal engines pass, a
// candidate whose decode is twice as slow (higher inter-token latency,
// lower output tokens/s) fails naming the comparisons of both arms, and
// the two servers' trials are interleaved.
func TestLLMServerAB(t *testing.T) {
	const sc = "testdata/llm-server-ab/ab.yaml"
	const (
		tpot = "candidate/llm-vs-released/llm-tpot_p50 <= 1.25 @ candidate/llm/c=4 vs released/llm/c=4"
		toks = "candidate/llm-vs-released/llm-output_tokens_per_s >= 0.8 @ candidate/llm/c=4 vs released/llm/c=4"
	)
	cases := []struct {
		name   string
		flags  []string
		want   int
		status string
		out    []string
	}{
		{name: "candidate equal", want: 0, status: "pass", out: []string{"PASS"}},
		{name: "candidate decode slower", flags: []string{"--model-param", "candidate/llm.decode_slowdown=2"}, want: 1, status: "fail",
			out: []string{"FAIL", tpot, toks}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "-q", sc, "--out-dir", dir}, tc.flags...)
			code, stdout, stderr := perfscen(t, args...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			for _, s := range tc.out {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			run, err := result.ReadFile(filepath.Join(dir, "llm-server-ab-e2e.json"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Verdict == nil {
				t.Fatal("result has no verdict")
			}
			n := 0
			for _, c := range run.Verdict.Checks {
				if c.Kind != "comparison" {
					continue
				}
				n++
				if c.Status != tc.status {
					t.Errorf("comparison %s: status %s, want %s", c.Name, c.Status, tc.status)
				}
			}
			if n != 2 {
				t.Errorf("%d comparisons in the verdict, want 2: %+v", n, run.Verdict.Checks)
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
	dir := t.TempDir()
	code, stdout, stderr := perfscen(t, "run", "testdata/llm-server-ab/unreachable.yaml", "--out-dir", dir, "--connect-timeout", "300ms")
	if code != 3 {
		t.Fatalf("unreachable candidate: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "server candidate") {
		t.Errorf("stderr does not name the server:\n%s", stderr)
	}
	run, err := result.ReadFile(filepath.Join(dir, "llm-server-ab-unreachable.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 0 {
		t.Errorf("%d point(s) measured before every server was reached", len(run.Points))
	}
}
