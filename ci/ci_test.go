// Package ci holds the tests of the CI templates in this folder: the
// GitHub Actions workflow and the GitLab CI job parse and wire the gate as
// documented, and the shared script maps perfscen's exit codes, writes
// the reports and the job summary, run here against the embedded server.
package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/perfscen/perfscen/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// The GitLab job runs the shared script, lets exit 4 through as a warning
// (allow_failure.exit_codes), keeps the reports whatever happened, hands
// the JUnit report to merge requests and caches the baseline history.
func TestGitLabJob(t *testing.T) {
	doc := readYAML(t, filepath.Join("gitlab", "perfscen.gitlab-ci.yml"))
	job, ok := doc["perfscen"].(map[string]any)
	if !ok {
		t.Fatalf("no perfscen job: %v", doc)
	}
	af, _ := job["allow_failure"].(map[string]any)
	codes, _ := af["exit_codes"].([]any)
	if len(codes) != 1 || codes[0] != 4 {
		t.Errorf("allow_failure.exit_codes = %v, want [4]", af["exit_codes"])
	}
	art, _ := job["artifacts"].(map[string]any)
	reports, _ := art["reports"].(map[string]any)
	if art["when"] != "always" || reports["junit"] == nil {
		t.Errorf("artifacts = %v", art)
	}
	cache, _ := job["cache"].(map[string]any)
	if paths, _ := cache["paths"].([]any); len(paths) != 1 || paths[0] != "baselines/" {
		t.Errorf("cache = %v", cache)
	}
	script := ""
	for _, l := range job["script"].([]any) {
		script += l.(string) + "\n"
	}
	for _, want := range []string{"bash ci/perfscen-gate.sh $PERFSCEN_SCENARIOS", "perfscen baseline update --from", "exit \"$code\""} {
		if !strings.Contains(script, want) {
			t.Errorf("the job's script lacks %q", want)
		}
	}
}

// The GitHub workflow runs the gate without stopping at its exit code,
// uploads the reports whatever happened, and turns exit 4 into a warning
// and every other failure into a failed job.
func TestGitHubWorkflow(t *testing.T) {
	doc := readYAML(t, filepath.Join("github", "perfscen.yml"))
	jobs := doc["jobs"].(map[string]any)
	steps := jobs["gate"].(map[string]any)["steps"].([]any)
	byName := map[string]map[string]any{}
	for _, s := range steps {
		m := s.(map[string]any)
		if n, ok := m["name"].(string); ok {
			byName[n] = m
		}
	}
	gate := byName["Run the gate"]
	if gate == nil || gate["continue-on-error"] != true || !strings.Contains(gate["run"].(string), `bash ci/perfscen-gate.sh "${scenarios[@]}"`) {
		t.Errorf("gate step = %v", gate)
	}
	if up := byName["Upload the reports"]; up == nil || up["if"] != "always()" {
		t.Errorf("upload step = %v", up)
	}
	v := byName["Verdict"]
	if v == nil || !strings.Contains(v["run"].(string), "4) echo \"::warning") || !strings.Contains(v["run"].(string), "exit 1") {
		t.Errorf("verdict step = %v", v)
	}
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

// Every exit code of perfscen comes out of the script unchanged, with its
// verdict in words; exit 4 reads "needs a rerun".
func TestGateScriptExitCodes(t *testing.T) {
	for code, want := range map[int]string{
		0: "PASS", 1: "FAIL: a check failed", 2: "INVALID", 3: "COULD NOT MEASURE", 4: "NEEDS A RERUN",
	} {
		fake := filepath.Join(t.TempDir(), "perfscen")
		script := "#!/bin/sh\nfor a; do case $prev in --markdown) echo '| check | status |' > \"$a\";; esac; prev=$a; done\nexit " + string(rune('0'+code)) + "\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		got, out, summary := runGate(t, fake, "s.yaml")
		verdict, _ := os.ReadFile(filepath.Join(out, "verdict.txt"))
		ec, _ := os.ReadFile(filepath.Join(out, "exit-code"))
		if got != code || !strings.HasPrefix(string(verdict), want) || strings.TrimSpace(string(ec)) != string(rune('0'+code)) {
			t.Errorf("perfscen exit %d: script exit %d, verdict %q, exit-code %q", code, got, verdict, ec)
		}
		if !strings.Contains(summary, "### perfscen: "+want) || !strings.Contains(summary, "| check | status |") {
			t.Errorf("perfscen exit %d: job summary %q", code, summary)
		}
	}
}

// The script with the real perfscen on a scenario of the embedded server:
// exit 0, and the reports a job keeps.
func TestGateScriptRuns(t *testing.T) {
	bin := testbin.Perfscen(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(sc, []byte(`version: 1
name: tiny
server: {embedded: true}
models:
  - name: simple
load: {mode: iterations, iterations: 50}
thresholds:
  - errors == 0
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, summary := runGate(t, bin, sc)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, f := range []string{"report.html", "junit.xml", "summary.md", "tiny.json", "verdict.txt", "exit-code"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(summary, "### perfscen: PASS") {
		t.Errorf("job summary %q", summary)
	}
}
