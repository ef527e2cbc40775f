package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// A released and a candidate build, here two embedded servers in one run
// of the binary, compared with interleaved trials on real time. Whether
// such a run can decide depends on how busy the machine is: on a starved
// runner the interval straddles the bound and the honest answer is
// inconclusive (exit 4). So what the data guarantees is asserted: equal
// builds are never failed, a candidate four times slower (delay 40 ms
// against 10 ms, bound 1.15) is never passed, the exit code and summary
// are the comparison's, a failure names both arms, and each arm carries
// its server. TestServerABOnTheFakeClock (cmd/perfscen) runs this scenario
// on exact latencies and pins the decisions: pass, and fail at 40% slower.
func TestServerAB(t *testing.T) {
	const sc = "testdata/server-ab/ab.yaml"
	const check = "candidate/delay-vs-released/delay-p50 <= 1.15"
	const where = " @ candidate/delay/c=1 vs released/delay/c=1"
	cases := []struct {
		name    string
		flags   []string
		decided string // the comparison's status when the data decides
	}{
		{name: "candidate equal", decided: "pass"},
		{name: "candidate slower", flags: []string{"--model-param", "candidate/delay.delay=40ms"}, decided: "fail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", sc, "--out-dir", dir}, tc.flags...)
			code, stdout, stderr, run := runGated(t, filepath.Join(dir, "server-ab-e2e.json"), args...)
			status := ""
			for _, c := range run.Verdict.Checks {
				if c.Kind == "comparison" && c.Name == check {
					status = c.Status
				}
			}
			checkDecision(t, code, stdout, stderr, run, check, where, status, tc.decided)
			// Each arm is labelled with its server, and both servers
			// are described.
			servers := map[string]string{}
			for _, p := range run.Points {
				servers[p.Model] = p.Server
			}
			arms := map[string]string{"candidate/delay": "candidate", "released/delay": "released"}
			for m, s := range arms {
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
	checkUnreachableCandidate(t, "testdata/server-ab/unreachable.yaml", filepath.Join(t.TempDir(), "server-ab-unreachable.json"))
	for _, cmd := range []string{"validate", "run"} {
		code, _, stderr := perfscen(t, cmd, "testdata/server-ab/ambiguous.yaml")
		want := "testdata/server-ab/ambiguous.yaml:9:16: comparisons[0].candidate: `delay` names no server; with several servers write server/model: candidate/delay, released/delay"
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, want 2 with\n%s\nstderr:\n%s", cmd, code, want, stderr)
		}
	}
}
