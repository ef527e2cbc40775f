package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/result"
)

const recordScenario = `version: 1
name: rec
server:
  embedded: true
  timeout: 5s
%s
models:
  - name: simple
load:
  mode: iterations
  iterations: 30
baseline:
  path: hist/rec-baseline.json
`

// Problem 3: a result file carries its verdict, and baseline update --from
// records only runs that passed, each once, into the scenario's own
// baseline.path whatever the working directory.
func TestBaselineUpdateFromTrustsTheVerdict(t *testing.T) {
	scDir, work := t.TempDir(), t.TempDir()
	good := filepath.Join(scDir, "rec.yaml")
	bad := filepath.Join(scDir, "rec-bad.yaml")
	if err := os.WriteFile(good, []byte(strings.Replace(recordScenario, "%s", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// 30% of requests fail: over the default error budget, exit 1.
	faulty := strings.Replace(recordScenario, "%s", "  embedded_models:\n    simple: {error_rate: \"0.3\", seed: \"5\"}", 1)
	if err := os.WriteFile(bad, []byte(faulty), 0o644); err != nil {
		t.Fatal(err)
	}
	baselinePath := filepath.Join(scDir, "hist", "rec-baseline.json")

	if code, out := perfscenIn(t, work, "run", "-q", "--out", "bad.json", bad); code != 1 {
		t.Fatalf("faulty run: exit %d, want 1\n%s", code, out)
	}
	res, err := result.ReadFile(filepath.Join(work, "bad.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == nil || res.Verdict.Outcome != result.OutcomeFail || res.Verdict.ExitCode != 1 || res.RunID == "" {
		t.Fatalf("result does not record the failing verdict: id %q, %+v", res.RunID, res.Verdict)
	}
	code, out := perfscenIn(t, work, "baseline", "update", "--from", "bad.json")
	if code != 2 || !strings.Contains(out, "verdict is fail") || !strings.Contains(out, "error rate") {
		t.Fatalf("a failed run was not refused: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(baselinePath); err == nil {
		t.Fatal("baseline written for a refused run")
	}

	if code, out := perfscenIn(t, work, "run", "-q", "--out", "good.json", "--no-baseline", good); code != 0 {
		t.Fatalf("clean run: exit %d\n%s", code, out)
	}
	if code, out := perfscenIn(t, work, "baseline", "update", "--from", "good.json"); code != 0 {
		t.Fatalf("recording a passing run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(work, "baselines")); err == nil {
		t.Error("baseline written under the working directory instead of the scenario's baseline.path")
	}
	code, out = perfscenIn(t, work, "baseline", "update", "--from", "good.json")
	if code != 2 || !strings.Contains(out, "already recorded") {
		t.Fatalf("the same run recorded twice: exit %d\n%s", code, out)
	}
	f, err := baseline.Load(baselinePath)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, tb := range f.Testbeds {
		runs += len(tb.Runs)
	}
	if runs != 1 {
		t.Errorf("%d runs recorded, want 1", runs)
	}
	// --force records a failed run on purpose; the run id still counts once.
	if code, out := perfscenIn(t, work, "baseline", "update", "--force", "--from", "bad.json"); code != 0 {
		t.Fatalf("--force: exit %d\n%s", code, out)
	}
	if code, out := perfscenIn(t, work, "baseline", "update", "--force", "--from", "bad.json"); code != 2 || !strings.Contains(out, "already recorded") {
		t.Fatalf("--force recorded the same run twice: exit %d\n%s", code, out)
	}
}

// `baseline update --from` run from another working directory than the
// run, for a scenario named by a relative path: the result records where
// the scenario and its baseline are, so the run goes to the scenario's
// baseline.path without --baseline.
func TestBaselineUpdateFromAnotherDirectory(t *testing.T) {
	scDir, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(scDir, "rec.yaml"), []byte(strings.Replace(recordScenario, "%s", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(work, "r.json")
	if code, out := perfscenIn(t, scDir, "run", "-q", "--out", res, "rec.yaml"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	code, out := perfscenIn(t, work, "baseline", "update", "--from", "r.json")
	if code != 0 {
		t.Fatalf("update from another directory: exit %d\n%s", code, out)
	}
	want := filepath.Join(scDir, "hist", "rec-baseline.json")
	if !strings.Contains(out, want) {
		t.Errorf("output does not name %s:\n%s", want, out)
	}
	if _, err := baseline.Load(want); err != nil {
		t.Fatalf("baseline not at the scenario's baseline.path: %v", err)
	}
	for _, stray := range []string{filepath.Join(work, "hist"), filepath.Join(work, "baselines")} {
		if _, err := os.Stat(stray); err == nil {
			t.Errorf("baseline written under the working directory: %s", stray)
		}
	}
}
