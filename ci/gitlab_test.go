package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type glRule struct {
	If        string            `yaml:"if"`
	When      string            `yaml:"when"`
	Variables map[string]string `yaml:"variables"`
}

type glJob struct {
	Image     string            `yaml:"image"`
	Variables map[string]string `yaml:"variables"`
	Rules     []glRule          `yaml:"rules"`
	Cache     struct {
		Key       string   `yaml:"key"`
		Paths     []string `yaml:"paths"`
		Policy    string   `yaml:"policy"`
		Unprotect bool     `yaml:"unprotect"`
	} `yaml:"cache"`
	Needs        []string `yaml:"needs"`
	Script       []string `yaml:"script"`
	AllowFailure struct {
		ExitCodes []int `yaml:"exit_codes"`
	} `yaml:"allow_failure"`
	Artifacts struct {
		When    string            `yaml:"when"`
		Paths   []string          `yaml:"paths"`
		Reports map[string]string `yaml:"reports"`
	} `yaml:"artifacts"`
}

func loadGitLabJob(t *testing.T, file, name string) glJob {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]glJob
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	j, ok := doc[name]
	if !ok {
		t.Fatalf("%s: no job %s", file, name)
	}
	return j
}

// glCond evaluates a rules:if as GitLab does for the forms the templates
// use: $VAR, $A == $B, $A == "text", != and &&/|| of them; an unset
// variable is null, unequal to any text and to a set variable.
func glCond(t *testing.T, cond string, vars map[string]string) bool {
	t.Helper()
	for _, alt := range strings.Split(cond, "||") {
		all := true
		for _, term := range strings.Split(alt, "&&") {
			all = all && glTerm(t, strings.TrimSpace(term), vars)
		}
		if all {
			return true
		}
	}
	return false
}

func glTerm(t *testing.T, term string, vars map[string]string) bool {
	operand := func(s string) (string, bool) {
		s = strings.TrimSpace(s)
		if v, ok := strings.CutPrefix(s, "$"); ok {
			val, set := vars[v]
			return val, set
		}
		if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
			return s[1 : len(s)-1], true
		}
		t.Fatalf("rules:if operand %q not emulated", s)
		return "", false
	}
	for _, op := range []string{"==", "!="} {
		if a, b, ok := strings.Cut(term, op); ok {
			av, aset := operand(a)
			bv, bset := operand(b)
			eq := aset == bset && av == bv
			return eq == (op == "==")
		}
	}
	v, set := operand(term)
	return set && v != ""
}

// glPlan is what GitLab makes of the job in a pipeline: whether it runs,
// its variables (the job's, then the matching rule's), its cache key and
// policy with the variables expanded.
func glPlan(t *testing.T, j glJob, pipeline map[string]string) (bool, map[string]string, string, string) {
	t.Helper()
	vars := map[string]string{}
	for k, v := range pipeline {
		vars[k] = v
	}
	for k, v := range j.Variables {
		vars[k] = v
	}
	runs := len(j.Rules) == 0
	for _, r := range j.Rules {
		if r.If == "" || glCond(t, r.If, vars) {
			runs = r.When != "never"
			for k, v := range r.Variables {
				vars[k] = v
			}
			break
		}
	}
	expand := func(s string) string { return os.Expand(s, func(k string) string { return vars[k] }) }
	policy := expand(j.Cache.Policy)
	if policy == "" {
		policy = "pull-push"
	}
	return runs, vars, expand(j.Cache.Key), policy
}

var glPipelines = map[string]map[string]string{
	"default branch": {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_REF_NAME": "main"},
	"schedule":       {"CI_PIPELINE_SOURCE": "schedule", "CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_REF_NAME": "main"},
	"merge request": {"CI_PIPELINE_SOURCE": "merge_request_event", "CI_DEFAULT_BRANCH": "main", "CI_MERGE_REQUEST_IID": "7",
		"CI_COMMIT_REF_NAME": "feature", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "0000000"},
	"feature branch": {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "feature", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_REF_NAME": "feature"},
	"tag":            {"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_TAG": "v1", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_REF_NAME": "v1"},
}

// Only the default branch's pipelines write the history cache; merge
// requests restore it, from the same key whether the ref is protected or
// not. Exit 4 is an allowed failure; the reports are kept whatever
// happened, the JUnit one for the merge request's widget.
func TestGitLabCacheWrittenByDefaultBranchOnly(t *testing.T) {
	j := loadGitLabJob(t, filepath.Join("gitlab", "perfscen.gitlab-ci.yml"), "perfscen")
	want := map[string]string{"default branch": "pull-push", "schedule": "pull-push", "merge request": "pull"}
	for name, p := range glPipelines {
		runs, _, key, policy := glPlan(t, j, p)
		w, ok := want[name]
		if runs != ok || runs && policy != w {
			t.Errorf("%s pipeline: runs %v, cache policy %q; want runs %v, policy %q", name, runs, policy, ok, w)
		}
		if runs && key != "perfscen-baselines-ci-gitlab-2core" {
			t.Errorf("%s pipeline: cache key %q", name, key)
		}
	}
	if !j.Cache.Unprotect || len(j.Cache.Paths) != 1 || j.Cache.Paths[0] != "baselines/" {
		t.Errorf("cache = %+v: want baselines/, shared between protected and unprotected refs", j.Cache)
	}
	if len(j.AllowFailure.ExitCodes) != 1 || j.AllowFailure.ExitCodes[0] != 4 {
		t.Errorf("allow_failure.exit_codes = %v, want [4]", j.AllowFailure.ExitCodes)
	}
	if j.Artifacts.When != "always" || j.Artifacts.Reports["junit"] == "" {
		t.Errorf("artifacts = %+v", j.Artifacts)
	}
}

// glRunner runs a GitLab job's script as the runner does (one bash
// session under set -eo pipefail), around the runner's cache: restored
// before the script when the policy pulls, saved after a successful one
// when it pushes.
type glRunner struct {
	t     *testing.T
	job   glJob
	src   string            // perfscen's repository
	cache map[string]string // key → saved folder
	repo  string            // the project's checkout, copied per job
	runs  int
}

func (g *glRunner) run(pipeline, extra map[string]string) (ran bool, code int, log string) {
	t := g.t
	t.Helper()
	runs, vars, key, policy := glPlan(t, g.job, pipeline)
	if !runs {
		return false, 0, ""
	}
	g.runs++
	machine := t.TempDir()
	ws := filepath.Join(machine, "builds", "project")
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", g.repo, ws).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if saved, ok := g.cache[key]; ok && strings.Contains(policy, "pull") {
		for _, p := range g.job.Cache.Paths {
			if err := copyTree(filepath.Join(saved, p), filepath.Join(ws, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(machine, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	vars["PERFSCEN_REPO"] = g.src
	for k, v := range extra {
		vars[k] = v
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "set -eo pipefail\n"+strings.Join(g.job.Script, "\n"))
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + goShim(t, filepath.Join(machine, "go")) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + tmp, "TMPDIR=" + tmp, "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR=" + ws, "LANG=C.UTF-8"}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 0 && strings.Contains(policy, "push") {
		dst := filepath.Join(t.TempDir(), "cache")
		for _, p := range g.job.Cache.Paths {
			if err := copyTree(filepath.Join(ws, p), filepath.Join(dst, p)); err != nil {
				t.Fatal(err)
			}
		}
		g.cache[key] = dst
	}
	t.Logf("job %d (%s, cache %s):\n%s", g.runs, pipeline["CI_PIPELINE_SOURCE"], policy, out)
	return true, code, string(out)
}

func historyRuns(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), `"run_id"`)
}

// The job end to end: the default branch records its passing runs and
// writes the cache; a merge request that edited baselines/ gates against
// its own checkout's file but writes nothing; the next default-branch job
// restores the history the first one wrote and grows it.
func TestGitLabJobRecordsOnDefaultBranchOnly(t *testing.T) {
	t.Parallel()
	g := &glRunner{t: t, job: loadGitLabJob(t, filepath.Join("gitlab", "perfscen.gitlab-ci.yml"), "perfscen"),
		src: perfscenSource(t), cache: map[string]string{}, repo: historyRepo(t, "")}
	env := map[string]string{"PERFSCEN_SCENARIOS": "scenarios/tiny.yaml"}
	key := "perfscen-baselines-ci-gitlab-2core"
	history := func() string { return filepath.Join(g.cache[key], "baselines", "tiny.json") }

	if ran, code, log := g.run(glPipelines["default branch"], env); !ran || code != 0 || !strings.Contains(log, "recorded marked unstable") {
		t.Fatalf("default branch: ran %v, exit %d", ran, code)
	}
	if n := historyRuns(t, history()); n != 1 {
		t.Fatalf("history after the default branch's job: %d runs", n)
	}
	before, _ := os.ReadFile(history())

	// The merge request edits the history in its checkout.
	mr := historyRepo(t, "")
	writeFile(t, filepath.Join(mr, "baselines", "tiny.json"), otherTestbedBaseline(t))
	g.repo = mr
	if ran, code, log := g.run(glPipelines["merge request"], env); !ran || code != 0 || strings.Contains(log, "perfscen-record") {
		t.Fatalf("merge request: ran %v, exit %d", ran, code)
	}
	if after, _ := os.ReadFile(history()); string(after) != string(before) {
		t.Fatal("a merge request's job changed the cached history")
	}

	g.repo = historyRepo(t, "")
	if ran, code, _ := g.run(glPipelines["default branch"], env); !ran || code != 0 {
		t.Fatalf("default branch, again: ran %v, exit %d", ran, code)
	}
	if n := historyRuns(t, history()); n != 2 {
		t.Errorf("history after two default-branch jobs: %d runs, want 2", n)
	}
	if ran, _, _ := g.run(glPipelines["feature branch"], env); ran {
		t.Error("the job ran on a plain branch push")
	}
}

// The A/B jobs run in merge-request pipelines only: one builds a static
// perfscen in Go's image, the other runs the A/B in Triton's with the
// whole history (the base revision must be in the clone) against the
// merge request's diff base, exit 4 allowed.
func TestGitLabABJobs(t *testing.T) {
	file := filepath.Join("gitlab", "perfscen-ab.gitlab-ci.yml")
	build, ab := loadGitLabJob(t, file, "perfscen-ab-build"), loadGitLabJob(t, file, "perfscen-ab")
	for name, p := range glPipelines {
		for job, j := range map[string]glJob{"perfscen-ab-build": build, "perfscen-ab": ab} {
			if runs, _, _, _ := glPlan(t, j, p); runs != (name == "merge request") {
				t.Errorf("%s in a %s pipeline: runs %v", job, name, runs)
			}
		}
	}
	if build.Variables["CGO_ENABLED"] != "0" || !strings.Contains(strings.Join(build.Script, "\n"), "go install ./cmd/perfscen ./ci/prcomment") {
		t.Errorf("build job: %+v", build)
	}
	script := strings.Join(ab.Script, "\n")
	if len(ab.Needs) != 1 || ab.Needs[0] != "perfscen-ab-build" || ab.Variables["GIT_DEPTH"] != "0" ||
		!strings.Contains(script, `PERFSCEN_AB_BASE="$CI_MERGE_REQUEST_DIFF_BASE_SHA"`) || !strings.Contains(script, `bash "$PERFSCEN_CI/perfscen-ab.sh" $PERFSCEN_SCENARIOS`) ||
		!strings.Contains(ab.Variables["PERFSCEN_AB_START"], `--model-repository "$PERFSCEN_AB_TREE/models"`) {
		t.Errorf("A/B job: needs %v, variables %v, script:\n%s", ab.Needs, ab.Variables, script)
	}
	if len(ab.AllowFailure.ExitCodes) != 1 || ab.AllowFailure.ExitCodes[0] != 4 || ab.Artifacts.When != "always" {
		t.Errorf("A/B job: allow_failure %v, artifacts %+v", ab.AllowFailure, ab.Artifacts)
	}
}
