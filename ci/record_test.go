package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// The record script records passing runs and runs inconclusive only
// because a point's history could not gate it ("baseline can see a
// change": recording them is how that history steadies), and leaves out
// every other inconclusive run.
func TestRecordScriptRecordsBlindRuns(t *testing.T) {
	out := t.TempDir()
	log := filepath.Join(t.TempDir(), "updates")
	fake := filepath.Join(t.TempDir(), "perfscen")
	// A stand-in for `perfscen baseline update --from F`: it logs F and
	// says what perfscen says.
	script := "#!/bin/sh\nfor a; do case $prev in --from) f=$a;; esac; prev=$a; done\necho \"$f\" >> " + log + "\necho 'testbed tb: history 5 → 6 run(s)'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	blind := result.CheckOutcome{Kind: "baseline", Name: "baseline can see a change", Point: "m/c=1", Status: "inconclusive", Message: "inconclusive: no baseline check at m/c=1 could see a change"}
	undecided := result.CheckOutcome{Kind: "baseline", Name: "p50 vs baseline", Point: "m/c=1", Status: "inconclusive", Message: "inconclusive: straddles"}
	for name, checks := range map[string][]result.CheckOutcome{"blind": {blind}, "undecided": {blind, undecided}} {
		run := &result.Run{SchemaVersion: result.SchemaVersion, Scenario: name, Source: "perfscen", Status: result.StatusComplete,
			Verdict: &result.Verdict{Outcome: "inconclusive", ExitCode: 4, Summary: "INCONCLUSIVE", Checks: checks}}
		if err := result.WriteFile(filepath.Join(out, name+".json"), run); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "perfscen-record.sh")
	cmd.Env = append(os.Environ(), "PERFSCEN="+fake, "PERFSCEN_OUT="+out, "GITHUB_STEP_SUMMARY=")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	updated, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(updated)); got != filepath.Join(out, "blind.json") {
		t.Errorf("recorded %q, want only blind.json\n%s", got, b)
	}
	if !strings.Contains(string(b), "blind: recorded (testbed tb, history 5 → 6 run(s)); inconclusive (exit 4) only because its history could not gate a point yet") ||
		!strings.Contains(string(b), "undecided: not recorded: its verdict is inconclusive (exit 4)") {
		t.Errorf("record log:\n%s", b)
	}
}
