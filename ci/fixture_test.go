package ci

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfscen/perfscen/internal/testbin"
)

// prcommentBin builds ci/prcomment once per test process.
var prcommentBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "perfscen-prcomment-")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "prcomment")
	if out, err := exec.Command("go", "build", "-o", p, "./prcomment").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building prcomment: %v\n%s", err, out)
	}
	return p, nil
})

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=ci test", "-c", "user.email=ci@example.invalid",
		"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(b))
}

// perfscenSource is a git repository standing in for perfscen's on
// github.com: the files the templates' install step uses (go.mod, the two
// main packages, ci/'s scripts, from this checkout), on branch main. The
// workflows clone it as they would clone the real one.
func perfscenSource(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "perfscen")
	for _, f := range []string{"go.mod", "cmd/perfscen/main.go", "ci/prcomment/main.go", "ci/perfscen-gate.sh", "ci/perfscen-record.sh", "ci/perfscen-ab.sh"} {
		copyFile(t, filepath.Join("..", f), filepath.Join(dir, f))
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "perfscen")
	return dir
}

// goShim is a `go` command for the install step: `go install
// ./cmd/perfscen ./ci/prcomment` run in a clone of perfscen's module
// installs the binaries this test process built from the same source
// (compiling the module again would take minutes on a 2-core machine);
// `go env GOPATH` names the job's GOPATH. Anything else is an error, so a
// template that calls go otherwise fails here.
func goShim(t *testing.T, gopath string) string {
	t.Helper()
	perfscen := testbin.Perfscen(t)
	prc, err := prcommentBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go"), fmt.Sprintf(`#!/bin/bash
set -e
case "$1 $2" in
"env GOPATH") echo %[1]q; exit 0 ;;
esac
[ "$1" = install ] || { echo "go shim: unexpected: go $*" >&2; exit 2; }
grep -q '^module github.com/perfscen/perfscen$' go.mod || { echo "go shim: not in perfscen's module: $PWD" >&2; exit 1; }
mkdir -p %[1]q/bin
shift
for p in "$@"; do
	case "$p" in
	./cmd/perfscen) test -f cmd/perfscen/main.go; cp %[2]q %[1]q/bin/perfscen ;;
	./ci/prcomment) test -f ci/prcomment/main.go; cp %[3]q %[1]q/bin/prcomment ;;
	*) echo "go shim: unexpected package $p" >&2; exit 2 ;;
	esac
done
`, gopath, perfscen, prc))
	if err := os.Chmod(filepath.Join(dir, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeGitHub is GitHub's issue-comment API for one pull request (#7 of
// o/r): list, create, edit; readOnly refuses writes with 403, as GitHub
// does for the token of a pull request from a fork.
type fakeGitHub struct {
	mu       sync.Mutex
	readOnly bool
	comments []map[string]any
	writes   []string
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	const list, item = "/repos/o/r/issues/7/comments", "/repos/o/r/issues/comments/"
	if r.Header.Get("Authorization") != "Bearer gh-token" {
		http.Error(w, "bad credentials", http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == list:
		json.NewEncoder(w).Encode(f.comments)
		return
	case r.Method != http.MethodPost && r.Method != http.MethodPatch:
		http.Error(w, "unexpected", http.StatusTeapot)
		return
	case f.readOnly:
		f.writes = append(f.writes, r.Method+" refused")
		http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
		return
	}
	var in struct{ Body string }
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &in)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == list:
		f.comments = append(f.comments, map[string]any{"id": len(f.comments) + 100, "body": in.Body})
		f.writes = append(f.writes, "POST")
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, item):
		for _, c := range f.comments {
			if fmt.Sprint(c["id"]) == strings.TrimPrefix(r.URL.Path, item) {
				c["body"] = in.Body
				f.writes = append(f.writes, "PATCH "+fmt.Sprint(c["id"]))
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.Error(w, "unexpected", http.StatusTeapot)
	}
}

func (f *fakeGitHub) setReadOnly(ro bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readOnly = ro
}

func (f *fakeGitHub) state() ([]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var bodies []string
	for _, c := range f.comments {
		bodies = append(bodies, c["body"].(string))
	}
	return append([]string{}, f.writes...), bodies
}

// ghSetup is what every run of a workflow in one test shares: perfscen's
// repository to clone, the Actions cache, the comment API.
type ghSetup struct {
	t       *testing.T
	wf      workflow
	job     string
	src     string
	cache   *actionsCache
	api     *fakeGitHub
	apiURL  string
	runs    int
	userDir string   // the user's repository, copied into each run's workspace
	path    []string // more folders first on PATH (a tritonserver)
}

func newGHSetup(t *testing.T, workflowFile, job, userDir string) *ghSetup {
	t.Helper()
	api := &fakeGitHub{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &ghSetup{t: t, wf: loadWorkflow(t, workflowFile), job: job, src: perfscenSource(t),
		cache: &actionsCache{dir: t.TempDir()}, api: api, apiURL: srv.URL, userDir: userDir}
}

// run runs the job once for an event on a fresh machine: a new workspace
// (a copy of the user's repository, with its git history when it has
// one), runner temp and GOPATH.
func (s *ghSetup) run(event, ref string, payload map[string]any, env map[string]string) *jobResult {
	t := s.t
	t.Helper()
	s.runs++
	machine := t.TempDir()
	ws := filepath.Join(machine, "work", "repo")
	if err := os.MkdirAll(filepath.Dir(ws), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", s.userDir, ws).CombinedOutput(); err != nil {
		t.Fatalf("copying the checkout: %v\n%s", err, out)
	}
	temp := filepath.Join(machine, "runner-temp")
	for _, d := range []string{temp, filepath.Join(temp, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	all := map[string]string{"PERFSCEN_REPO": s.src}
	for k, v := range env {
		all[k] = v
	}
	r := &ghRunner{t: t, wf: s.wf, job: s.job, event: event, ref: ref, payload: payload, repo: "o/r",
		workspace: ws, temp: temp, cache: s.cache, env: all, token: "gh-token", runID: 1000 + s.runs,
		path:     append([]string{goShim(t, filepath.Join(machine, "go"))}, s.path...),
		extraEnv: map[string]string{"GITHUB_API_URL": s.apiURL}}
	res := r.run()
	t.Logf("run %d (%s %s):\n%s", s.runs, event, ref, res.log)
	return res
}

func pushEvent() map[string]any {
	return map[string]any{"repository": map[string]any{"default_branch": "main"}}
}

func prEvent() map[string]any { return prEventBase("") }

// prEventBase is a pull_request event whose base branch is at sha.
func prEventBase(sha string) map[string]any {
	return map[string]any{"pull_request": map[string]any{"number": 7.0, "base": map[string]any{"sha": sha, "ref": "main"}},
		"repository": map[string]any{"default_branch": "main"}}
}
