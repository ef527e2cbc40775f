package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/runner/result"
)

// writeScenario writes a scenario into a temp dir and returns its path.
func writeScenario(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const iterationsScenario = `version: 1
name: tiny
server:
  embedded: true
  protocol: %s
  timeout: 5s
models:
  - name: simple
load:
  mode: iterations
  warmup_iterations: 5
  iterations: 40
thresholds:
  - errors == 0
`

func TestRunEmbeddedPasses(t *testing.T) {
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			sc := writeScenario(t, dir, "tiny.yaml", strings.Replace(iterationsScenario, "%s", proto, 1))
			out := filepath.Join(dir, "res.json")
			code, stdout, stderr := runCLI(t, "run", sc, "--out", out, "--junit", filepath.Join(dir, "j.xml"), "-q")
			if code != 0 {
				t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			run, err := result.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Points) != 1 || run.Points[0].Summary.Requests != 40 {
				t.Fatalf("want one point with exactly 40 measured requests, got %+v", run.Points)
			}
			if !strings.Contains(stdout, "PASS") {
				t.Errorf("no PASS summary line in:\n%s", stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "j.xml")); err != nil {
				t.Errorf("junit report not written: %v", err)
			}
		})
	}
}

// A corrupted input-data file is refused with exit 2, naming the file and
// position, before any load: no results are written.
func TestRunCorruptInputDataExits2(t *testing.T) {
	dir := t.TempDir()
	data := `{"data": [{"INPUT0": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], "INPUT1": [1,2,3]}]}`
	if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := writeScenario(t, dir, "bad.yaml", `version: 1
name: bad-data
server:
  embedded: true
models:
  - name: simple
    input_data: data.json
load:
  mode: iterations
  iterations: 10
`)
	out := filepath.Join(dir, "res.json")
	code, _, stderr := runCLI(t, "run", sc, "--out", out, "-q")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"data.json:1:", "INPUT1", "16", "found 3"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("results written for a run that never started")
	}
}

func TestRunInvalidScenarioExits2(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "bad.yaml", "version: 1\nmodels: []\nbogus: 1\n")
	code, _, stderr := runCLI(t, "run", sc, "-q", "--out-dir", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "bad.yaml:") {
		t.Errorf("error does not name file:line:\n%s", stderr)
	}
}

func TestWorseOrdersExitCodes(t *testing.T) {
	cases := []struct{ a, b, want int }{
		// A failure demonstrated by data is never hidden by another
		// scenario's invalid input or environment failure.
		{0, 1, 1}, {1, 3, 1}, {3, 1, 1}, {1, 2, 1}, {2, 1, 1},
		{3, 2, 2}, {2, 3, 2}, {2, 0, 2}, {0, 0, 0}, {3, 0, 3},
		// Inconclusive outranks a pass and yields to everything else.
		{0, 4, 4}, {4, 0, 4}, {4, 1, 1}, {1, 4, 1}, {4, 3, 3}, {2, 4, 2},
	}
	for _, c := range cases {
		if got := worse(c.a, c.b); got != c.want {
			t.Errorf("worse(%d,%d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestRunModelParamOverridesEmbeddedModel(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "tiny.yaml", strings.Replace(iterationsScenario, "%s", "http", 1))
	// Half the requests fail: the errors == 0 threshold fails (exit 1).
	code, stdout, stderr := runCLI(t, "run", sc, "-q", "--out-dir", dir, "--model-param", "simple.error_rate=0.5")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "errors == 0") {
		t.Errorf("report does not name the failed threshold:\n%s", stdout)
	}
	// Every request fails: nothing was measured (exit 3), with the
	// server's error.
	code, stdout, stderr = runCLI(t, "run", sc, "-q", "--out-dir", dir, "--model-param", "simple.error_rate=1")
	if code != 3 || !strings.Contains(stdout, "injected failure") {
		t.Fatalf("exit %d, want 3 naming the server's error\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, "run", sc, "-q", "--out-dir", dir, "--model-param", "simple")
	if code != 2 || !strings.Contains(stderr, "model.key=value") {
		t.Fatalf("bad --model-param: exit %d, want 2; stderr:\n%s", code, stderr)
	}
}

// Every command's --help shows examples.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRoot(&env{})
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		subs := c.Commands()
		if len(subs) == 0 {
			if c.Example == "" {
				t.Errorf("perfscen %s --help has no examples", c.Name())
			}
			continue
		}
		for _, s := range subs {
			if s.Example == "" {
				t.Errorf("perfscen %s %s --help has no examples", c.Name(), s.Name())
			}
		}
	}
}

func TestRunJSONTensorsOverHTTP(t *testing.T) {
	dir := t.TempDir()
	body := strings.Replace(iterationsScenario, "%s", "http\n  tensor_format: json", 1)
	sc := writeScenario(t, dir, "json.yaml", body)
	out := filepath.Join(dir, "res.json")
	code, stdout, stderr := runCLI(t, "run", sc, "--out", out, "-q")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	run, err := result.ReadFile(out)
	if err != nil || run.Points[0].Summary.Requests != 40 {
		t.Fatalf("json-tensor run: %v %+v", err, run)
	}
}

// validate knows the embedded server's models and parameters, so a typo
// there fails before any run.
func TestValidateChecksEmbeddedModels(t *testing.T) {
	dir := t.TempDir()
	// Each error names the line and column of what it is about.
	for name, tc := range map[string]struct{ body, where string }{
		"model.yaml": {"version: 1\nserver: {embedded: true}\nmodels: [{name: simpel}]\n", "model.yaml:3:17: models[0].name: "},
		"param.yaml": {"version: 1\nserver:\n  embedded: true\n  embedded_models: {delay: {dealy: 5ms}}\nmodels: [{name: delay}]\n", "param.yaml:4:21: server.embedded_models.delay: "},
		"value.yaml": {"version: 1\nserver:\n  embedded: true\n  embedded_models: {delay: {error_rate: \"2\"}}\nmodels: [{name: delay}]\n", "value.yaml:4:21: server.embedded_models.delay: "},
	} {
		sc := writeScenario(t, dir, name, tc.body)
		code, _, stderr := runCLI(t, "validate", sc)
		if code != 2 || !strings.Contains(stderr, tc.where) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
	}
	ok := writeScenario(t, dir, "ok.yaml", "version: 1\nserver:\n  embedded: true\n  embedded_models: {delay: {delay: 5ms}}\nmodels: [{name: delay}]\n")
	if code, _, stderr := runCLI(t, "validate", ok); code != 0 {
		t.Errorf("valid embedded scenario: exit %d\n%s", code, stderr)
	}
}

// In GitHub Actions a failed check becomes an ::error annotation (through
// report.Annotate); elsewhere no annotation is printed.
func TestRunAnnotatesOnGitHub(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "tiny.yaml", strings.Replace(iterationsScenario, "%s", "http", 1))
	for _, gh := range []string{"true", ""} {
		t.Setenv("GITHUB_ACTIONS", gh)
		t.Setenv("GITHUB_STEP_SUMMARY", "")
		code, stdout, stderr := runCLI(t, "run", sc, "-q", "--out-dir", dir, "--model-param", "simple.error_rate=0.5")
		if code != 1 {
			t.Fatalf("GITHUB_ACTIONS=%q: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", gh, code, stdout, stderr)
		}
		if got := strings.Contains(stdout, "::error "); got != (gh == "true") {
			t.Errorf("GITHUB_ACTIONS=%q: annotation printed %v\nstdout:\n%s", gh, got, stdout)
		}
	}
}

// perfscen run removes shared memory left by a perfscen process that died
// without unlinking it, and keeps a live process's.
func TestRunRemovesStaleSharedMemory(t *testing.T) {
	// pid 0x7ffffffe is above Linux's pid_max, so it cannot be running.
	dead := filepath.Join(shm.Dir, shm.Prefix+"2147483646_runtest")
	live := filepath.Join(shm.Dir, shm.NewKey("runtest")[1:])
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
	}
	code, _, stderr := runCLI(t, "run", filepath.Join(t.TempDir(), "missing.yaml"))
	if code != 2 {
		t.Fatalf("exit %d, want 2 for a missing scenario\n%s", code, stderr)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale %s still there (%v)", dead, err)
	}
	if !strings.Contains(stderr, "removed stale shared memory "+dead) {
		t.Errorf("stderr does not report the removal:\n%s", stderr)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's %s was removed: %v", live, err)
	}
}
