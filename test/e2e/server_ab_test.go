package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/result"
)

// A released and a candidate build, here two embedded servers in one run,
// compared with interleaved trials: equal builds pass, a candidate 40%
// slower (delay 14 ms against 10 ms, bound 1.15) fails naming both arms.
func TestServerAB(t *testing.T) {
	const sc = "testdata/server-ab/ab.yaml"
	cases := []struct {
		name  string
		flags []string
		want  int
		out   []string
	}{
		{name: "candidate equal", want: 0, out: []string{"PASS"}},
		{name: "candidate slower", flags: []string{"--model-param", "candidate/delay.delay=14ms"}, want: 1,
			out: []string{"FAIL", "failed: candidate/delay-vs-released/delay-p50 <= 1.15 @ candidate/delay/c=1 vs released/delay/c=1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", sc, "--out-dir", dir}, tc.flags...)
			code, stdout, stderr := perfscen(t, args...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout, stderr)
			}
			for _, s := range tc.out {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "server-ab-e2e.json"))
			if err != nil {
				t.Fatal(err)
			}
			var run result.Run
			if err := json.Unmarshal(b, &run); err != nil {
				t.Fatal(err)
			}
			// Each arm is labelled with its server, and both servers
			// are described.
			servers := map[string]string{}
			for _, p := range run.Points {
				servers[p.Model] = p.Server
			}
			want := map[string]string{"candidate/delay": "candidate", "released/delay": "released"}
			for m, s := range want {
				if servers[m] != s {
					t.Errorf("point of %s: server %q, want %q", m, servers[m], s)
				}
			}
			if len(run.Environment.Servers) != 2 {
				t.Errorf("environment servers: %+v, want two", run.Environment.Servers)
			}
		})
	}
}

// Every server is reached before any load: an unreachable candidate is
// exit 3 with nothing measured on the released server; an arm that names
// no server is exit 2 from validate and run alike, at its file:line.
func TestServerABRefusedBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := perfscen(t, "run", "testdata/server-ab/unreachable.yaml", "--out-dir", dir, "--connect-timeout", "300ms")
	if code != 3 {
		t.Fatalf("unreachable candidate: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "server candidate") {
		t.Errorf("stderr does not name the server:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "server-ab-unreachable.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run result.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 0 {
		t.Errorf("%d point(s) measured before every server was reached", len(run.Points))
	}
	for _, cmd := range []string{"validate", "run"} {
		code, _, stderr := perfscen(t, cmd, "testdata/server-ab/ambiguous.yaml")
		want := "testdata/server-ab/ambiguous.yaml:9:16: comparisons[0].candidate: `delay` names no server; with several servers write server/model: candidate/delay, released/delay"
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want 2 with\n%s\nstderr:\n%s", cmd, code, want, stderr)
		}
	}
}
