// Package ci holds the tests of the CI templates in this folder. The
// scripts run against the real perfscen; the GitHub workflows are run step
// by step as the hosted runner would (actions_test.go says why not in a
// local runner) and the GitLab jobs by their rules, cache and script; the
// same-job A/B example runs against the real Triton in ../shared/triton.
package ci

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/testbin"
	"github.com/perfscen/perfscen/runner/result"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// runGate runs the shared script with perfscen (or a stand-in) and
// returns its exit code and the folder it wrote.
func runGate(t *testing.T, perfscen string, args ...string) (int, string, string) {
	t.Helper()
	out := t.TempDir()
	summary := filepath.Join(t.TempDir(), "step-summary.md")
	cmd := exec.Command("bash", append([]string{"perfscen-gate.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "PERFSCEN="+perfscen, "PERFSCEN_OUT="+out, "GITHUB_STEP_SUMMARY="+summary)
	b, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	s, _ := os.ReadFile(summary)
	t.Logf("%s", b)
	return code, out, string(s)
}

// fakePerfscen is a stand-in for perfscen run: it appends a summary to
// $GITHUB_STEP_SUMMARY as perfscen does, copies result (when given) into
// --out-dir, and exits with code.
func fakePerfscen(t *testing.T, code int, result string) string {
	t.Helper()
	fake := filepath.Join(t.TempDir(), "perfscen")
	script := `#!/bin/sh
for a; do case $prev in --out-dir) out=$a;; esac; prev=$a; done
printf '## perfscen: fake\n\n| check | status |\n' >> "$GITHUB_STEP_SUMMARY"
`
	if result != "" {
		script += "cp " + result + " \"$out/fake.json\"\n"
	}
	script += fmt.Sprintf("exit %d\n", code)
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return fake
}

// Every exit code of perfscen comes out of the script unchanged, with its
// verdict in words, once in the job summary and in the comment.
func TestGateScriptExitCodes(t *testing.T) {
	for code, want := range map[int]string{
		0: "PASS", 1: "FAIL: a check failed", 2: "INVALID", 3: "COULD NOT MEASURE", 4: "INCONCLUSIVE: the data could not decide",
	} {
		got, out, summary := runGate(t, fakePerfscen(t, code, ""), "s.yaml")
		verdict, _ := os.ReadFile(filepath.Join(out, "verdict.txt"))
		ec, _ := os.ReadFile(filepath.Join(out, "exit-code"))
		if got != code || !strings.HasPrefix(string(verdict), want) || strings.TrimSpace(string(ec)) != fmt.Sprint(code) {
			t.Errorf("perfscen exit %d: script exit %d, verdict %q, exit-code %q", code, got, verdict, ec)
		}
		if !strings.HasPrefix(summary, "### perfscen: "+want) || strings.Count(summary, "## perfscen: fake") != 1 {
			t.Errorf("perfscen exit %d: job summary %q", code, summary)
		}
		comment, _ := os.ReadFile(filepath.Join(out, "comment.md"))
		if !strings.HasPrefix(string(comment), "**perfscen:** "+want) || strings.Count(string(comment), "## perfscen: fake") != 1 {
			t.Errorf("perfscen exit %d: comment %q", code, comment)
		}
	}
}

const tinyScenario = `version: 1
name: %s
server:
  embedded: true
  embedded_models:
    simple: {added_latency: 2ms}
models:
  - name: simple
load: {concurrency: 1}
measurement: {window: 200ms, trials: 3, max_trials: 3, stability: 50%%, allow_unstable: true}
thresholds:
  - errors == 0
`

// The script with the real perfscen on two scenarios of the embedded
// server: exit 0, the reports a job keeps, and each scenario's summary
// once in the job summary (perfscen appends it to GITHUB_STEP_SUMMARY
// itself: the script must not add it again) and once in the comment.
func TestGateScriptRuns(t *testing.T) {
	bin := testbin.Perfscen(t)
	dir := t.TempDir()
	for _, n := range []string{"one", "two"} {
		writeFile(t, filepath.Join(dir, n+".yaml"), fmt.Sprintf(tinyScenario, n))
	}
	code, out, summary := runGate(t, bin, filepath.Join(dir, "one.yaml"), filepath.Join(dir, "two.yaml"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"report.one.html", "junit.two.xml", "summary.one.md", "one.json", "two.json", "verdict.txt", "exit-code", "comment.md"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	comment, _ := os.ReadFile(filepath.Join(out, "comment.md"))
	for what, text := range map[string]string{"job summary": summary, "comment": string(comment)} {
		if !strings.Contains(text, "PASS: no regression") {
			t.Errorf("%s has no verdict:\n%s", what, text)
		}
		for _, n := range []string{"one", "two"} {
			if c := strings.Count(text, "## perfscen: "+n+"\n"); c != 1 {
				t.Errorf("%s holds the summary of %s %d times, want once:\n%s", what, n, c, text)
			}
		}
	}
}

// otherTestbedBaseline is a baseline file for tinyScenario("tiny") with
// one run recorded under testbed "other" only, made by the real perfscen.
func otherTestbedBaseline(t *testing.T) string {
	t.Helper()
	bin := testbin.Perfscen(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "tiny.yaml")
	writeFile(t, sc, fmt.Sprintf(tinyScenario, "tiny"))
	for _, args := range [][]string{
		{"run", "-q", "--testbed", "other", "--out-dir", dir, sc},
		{"baseline", "update", "--baseline", filepath.Join(dir, "base.json"), "--from", filepath.Join(dir, "tiny.json")},
	} {
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("perfscen %v: %v\n%s", args, err, b)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Exit 4 says what to do about its cause. With --require-gated, no history
// for this testbed and a check that cannot see its change are not fixed
// by a rerun (real perfscen runs); undecided checks and a disturbed
// testbed may be (result files whose verdicts say so, written by the
// result package as perfscen writes them).
func TestGateScriptInconclusiveAdvice(t *testing.T) {
	bin := testbin.Perfscen(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "tiny.yaml")
	writeFile(t, sc, fmt.Sprintf(tinyScenario, "tiny")+"baseline: {path: base.json, metrics: [p50]}\n")
	writeFile(t, filepath.Join(dir, "base.json"), otherTestbedBaseline(t))
	t.Setenv("PERFSCEN_FLAGS", "--require-gated")
	code, out, summary := runGate(t, bin, sc)
	verdict, _ := os.ReadFile(filepath.Join(out, "verdict.txt"))
	if code != 4 || !strings.HasPrefix(string(verdict), "INCONCLUSIVE, A RERUN WILL NOT HELP: no baseline history for this testbed") ||
		!strings.Contains(summary, "Record the history first") || strings.Contains(summary, "NEEDS A RERUN") {
		t.Errorf("no history: exit %d, verdict %q, summary:\n%s", code, verdict, summary)
	}

	// p99 of a 200 ms trial rests on its few slowest requests: not gated.
	noisy := filepath.Join(dir, "noisy.yaml")
	writeFile(t, noisy, fmt.Sprintf(tinyScenario, "noisy")+"baseline: {path: noisy-base.json, metrics: [p99]}\n")
	for _, args := range [][]string{{"run", "-q", "--out-dir", dir, noisy}, {"baseline", "update", "--from", filepath.Join(dir, "noisy.json")}} {
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("perfscen %v: %v\n%s", args, err, b)
		}
	}
	code, out, summary = runGate(t, bin, noisy)
	verdict, _ = os.ReadFile(filepath.Join(out, "verdict.txt"))
	if code != 4 || !strings.HasPrefix(string(verdict), "INCONCLUSIVE, A RERUN WILL NOT HELP: 1 check not gated") ||
		!strings.Contains(summary, "cannot detect the change it exists for") {
		t.Errorf("not gated: exit %d, verdict %q, summary:\n%s", code, verdict, summary)
	}
	t.Setenv("PERFSCEN_FLAGS", "")

	// Undecided and disturbed checks: a rerun may decide.
	run, err := result.ReadFile(filepath.Join(dir, "noisy.json"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(status, msg string) result.CheckOutcome {
		return result.CheckOutcome{Kind: "baseline", Name: "p50 vs baseline", Point: "simple/c=1", Status: status, Message: msg}
	}
	for _, tc := range []struct {
		checks []result.CheckOutcome
		want   string
		advice []string
	}{
		{[]result.CheckOutcome{check("inconclusive", "inconclusive: +4.0% [-1.0%, +9.0%] straddles +5%")},
			"NEEDS A RERUN: 1 check undecided", []string{"a rerun measures afresh and may decide"}},
		{[]result.CheckOutcome{check("inconclusive", "inconclusive: testbed disturbed (wake-up delays p90 +2.1ms); +30%"), check("pass", ""), check("inconclusive", "x")},
			"NEEDS A RERUN: 1 check undecided; 1 check inconclusive on a disturbed testbed", []string{"may decide", "Rerun on a quieter runner"}},
		{[]result.CheckOutcome{check("inconclusive", "x"), check("inconclusive", "y"), check("not_gated", "not gated: testbed noise hides changes under 24%")},
			"NEEDS A RERUN: 2 checks undecided", nil},
		// A point no check of the history could gate: a rerun will not
		// help, recording more history will.
		{[]result.CheckOutcome{check("not_gated", "not gated: testbed noise hides any change under 100%"),
			{Kind: "baseline", Name: "baseline can see a change", Point: "simple/c=1", Status: "inconclusive", Message: "inconclusive: no baseline check at simple/c=1 could see a change (1 of 1 not gated or skipped: [p50]); …"}},
			"INCONCLUSIVE, A RERUN WILL NOT HELP: 1 point(s) the history cannot gate", []string{"perfscen-record.sh"}},
	} {
		run.Verdict = &result.Verdict{Outcome: "inconclusive", ExitCode: 4, Summary: "INCONCLUSIVE: …", Checks: tc.checks}
		path := filepath.Join(t.TempDir(), "r.json")
		if err := result.WriteFile(path, run); err != nil {
			t.Fatal(err)
		}
		code, out, summary := runGate(t, fakePerfscen(t, 4, path), "s.yaml")
		verdict, _ := os.ReadFile(filepath.Join(out, "verdict.txt"))
		if code != 4 || strings.TrimSpace(string(verdict)) != tc.want {
			t.Errorf("exit %d, verdict %q, want %q", code, verdict, tc.want)
		}
		for _, a := range tc.advice {
			if !strings.Contains(summary, a) {
				t.Errorf("%s: summary lacks %q:\n%s", tc.want, a, summary)
			}
		}
	}
}
