package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/baseline"
)

// A run on a testbed the baseline has no history for says so loudly and,
// with baseline.required, exits 3; the same run filed under a recorded
// testbed is gated. Testbed names come from --testbed or PERFSCEN_TESTBED.
//
// The runs are in memory on the fake clock (runMem), where the model's
// 1 ms service time gives the same throughput in every run: on real time
// the gated run could come out over 90% slower than the recorded one on
// a busy machine, and exit 1 or 4 for the machine's sake.
func TestTestbedNamesAndRequiredBaseline(t *testing.T) {
	synctest.Test(t, testbedNamesAndRequiredBaseline)
}

func testbedNamesAndRequiredBaseline(t *testing.T) {
	dir := t.TempDir()
	body := strings.Replace(iterationsScenario, "%s", "http", 1) +
		"baseline:\n  path: base.json\n  metrics: [throughput]\n  tolerances: {throughput: -90%}\n"
	// On the fake clock a request takes the time the model says: none
	// would make throughput infinite.
	body = strings.Replace(body, "  timeout: 5s\n", "  timeout: 5s\n  embedded_models:\n    simple: {added_latency: 1ms}\n", 1)
	sc := writeScenario(t, dir, "tiny.yaml", body)
	req := writeScenario(t, dir, "req.yaml", body+"  required: true\n")
	res := filepath.Join(dir, "res.json")

	if code, _, stderr := runMem(t, "baseline", "update", sc, "--testbed", "ci-a"); code != 0 {
		t.Fatalf("baseline update: exit %d\n%s", code, stderr)
	}
	f, err := baseline.Load(filepath.Join(dir, "base.json"))
	if err != nil || f.Testbeds["ci-a"] == nil || len(f.Testbeds["ci-a"].Runs) != 1 {
		t.Fatalf("run not filed under ci-a: %v %v", err, f)
	}

	code, stdout, stderr := runMem(t, "run", sc, "-q", "--out", res, "--testbed", "ci-b")
	if code != 0 || !strings.Contains(stdout+stderr, "NOT GATED: testbed ci-b (flag) has no baseline history") ||
		!strings.Contains(stdout+stderr, "ci-a (1 run(s))") {
		t.Fatalf("unrecorded testbed: exit %d, want 0 with a loud notice\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Setenv("PERFSCEN_TESTBED", "ci-b")
	code, stdout, stderr = runMem(t, "run", req, "-q", "--out", res)
	if code != 3 || !strings.Contains(stdout, "baseline.required") {
		t.Fatalf("required baseline, unrecorded testbed: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMem(t, "run", req, "-q", "--out", res, "--testbed", "ci-a")
	if code != 0 || strings.Contains(stdout+stderr, "NOT GATED") || !strings.Contains(stdout, "vs baseline") {
		t.Fatalf("recorded testbed (flag beats env): exit %d, want 0 and gated\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runMem(t, "run", sc, "-q", "--out", res, "--testbed", "a b"); code != 2 || !strings.Contains(stderr, "--testbed") {
		t.Fatalf("bad --testbed: exit %d, want 2: %s", code, stderr)
	}
}
