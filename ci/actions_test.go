package ci

// A GitHub Actions job, run here step by step. nektos/act, the local
// runner, starts each job in a container through a Docker engine and
// fetches every `uses:` action from github.com; the project's test
// machines have neither, so the workflow is parsed and each step's
// script run with bash as the runner would run it (`bash --noprofile
// --norc -eo pipefail`, GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH,
// GITHUB_STEP_SUMMARY, the event file), `if:` and `${{ }}` evaluated with
// GitHub's rules (loose equality, status functions, continue-on-error).
// The `uses:` actions the templates use are emulated by what they do to
// the workspace: the cache stores and restores folders under keys (the
// most recent match of a restore key wins), checkout and setup-go find
// the workspace and Go ready, upload-artifact checks its path exists.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"gopkg.in/yaml.v3"
)

type workflow struct {
	On   any               `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

type ghJob struct {
	If        string            `yaml:"if"`
	RunsOn    any               `yaml:"runs-on"`
	Container any               `yaml:"container"`
	Env       map[string]string `yaml:"env"`
	Steps     []ghStep          `yaml:"steps"`
}

type ghStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Uses            string            `yaml:"uses"`
	With            map[string]string `yaml:"with"`
	Env             map[string]string `yaml:"env"`
	Run             string            `yaml:"run"`
	Shell           string            `yaml:"shell"`
	ContinueOnError bool              `yaml:"continue-on-error"`
	WorkingDir      string            `yaml:"working-directory"`
}

func loadWorkflow(t *testing.T, path string) workflow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return wf
}

// ghRunner runs one job of a workflow for one event.
type ghRunner struct {
	t         *testing.T
	wf        workflow
	job       string
	event     string         // pull_request, push
	payload   map[string]any // github.event
	ref       string         // refs/heads/main, refs/pull/7/merge
	repo      string         // owner/name
	workspace string
	temp      string            // RUNNER_TEMP
	cache     *actionsCache     // shared across runs, as a repository's cache is
	env       map[string]string // overrides of the workflow's env: what a user edits
	path      []string          // folders put first on PATH (shims)
	extraEnv  map[string]string // the runner's own environment (GITHUB_API_URL, …)
	token     string
	runID     int
}

type stepResult struct {
	name, outcome, conclusion string
	output                    string
}

type jobResult struct {
	success  bool
	steps    []stepResult
	summary  string // every step's GITHUB_STEP_SUMMARY, in order
	log      string // every step's output
	warnings []string
	errors   []string
}

func (j *jobResult) step(name string) stepResult {
	for _, s := range j.steps {
		if s.name == name {
			return s
		}
	}
	return stepResult{name: name, outcome: "absent"}
}

func (r *ghRunner) github() map[string]any {
	refName := strings.TrimPrefix(strings.TrimPrefix(r.ref, "refs/heads/"), "refs/tags/")
	owner, _, _ := strings.Cut(r.repo, "/")
	return map[string]any{
		"event_name": r.event, "event": r.payload, "ref": r.ref, "ref_name": refName,
		"repository": r.repo, "repository_owner": owner, "run_id": strconv.Itoa(r.runID),
		"token": r.token, "workspace": r.workspace, "sha": "0000000000000000000000000000000000000000",
	}
}

func (r *ghRunner) run() *jobResult {
	t := r.t
	t.Helper()
	job, ok := r.wf.Jobs[r.job]
	if !ok {
		t.Fatalf("no job %q", r.job)
	}
	ev := filepath.Join(r.temp, "event.json")
	writeJSON(t, ev, r.payload)
	ctx := map[string]any{"github": r.github(), "vars": map[string]any{}, "secrets": map[string]any{},
		"runner": map[string]any{"temp": r.temp, "os": "Linux"}, "steps": map[string]any{}}
	env := map[string]string{}
	for _, level := range []map[string]string{r.wf.Env, job.Env} {
		for k, v := range level {
			env[k] = r.interpolate(t, v, ctx)
		}
	}
	for k, v := range r.env {
		env[k] = v
	}
	res := &jobResult{success: true}
	var extraPath []string
	steps := map[string]any{}
	ctx["steps"] = steps
	for i, st := range job.Steps {
		name := st.Name
		if name == "" {
			name = st.Uses
		}
		envCtx := map[string]any{}
		for k, v := range env {
			envCtx[k] = v
		}
		ctx["env"] = envCtx
		cond := st.If
		if cond == "" {
			cond = "success()"
		}
		if !truthy(r.eval(t, cond, ctx, res.success)) {
			res.steps = append(res.steps, stepResult{name: name, outcome: "skipped", conclusion: "skipped"})
			if st.ID != "" {
				steps[st.ID] = map[string]any{"outputs": map[string]any{}, "outcome": "skipped", "conclusion": "skipped"}
			}
			continue
		}
		stepEnv := map[string]string{}
		for k, v := range env {
			stepEnv[k] = v
		}
		for k, v := range st.Env {
			stepEnv[k] = r.interpolate(t, v, ctx)
		}
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = r.interpolate(t, v, ctx)
		}
		files := map[string]string{}
		for _, f := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
			files[f] = filepath.Join(r.temp, fmt.Sprintf("step%d.%s", i, strings.ToLower(f)))
			if err := os.WriteFile(files[f], nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out string
		var err error
		if st.Uses != "" {
			out, err = r.uses(st.Uses, with)
		} else {
			if strings.Contains(st.Run, "${{") {
				// Expressions in a script are substituted before bash sees
				// them: an event's text (a branch name, a title) would be
				// code. The templates pass them through env instead.
				t.Errorf("step %q: ${{ }} inside run:; pass it through env", name)
			}
			out, err = r.script(st, stepEnv, files, extraPath)
		}
		outcome := "success"
		if err != nil {
			outcome = "failure"
			out += fmt.Sprintf("\n[step failed: %v]", err)
		}
		conclusion := outcome
		if outcome == "failure" && st.ContinueOnError {
			conclusion = "success"
		}
		if conclusion == "failure" {
			res.success = false
		}
		outputs := map[string]any{}
		for k, v := range readKV(t, files["GITHUB_OUTPUT"]) {
			outputs[k] = v
		}
		if st.ID != "" {
			steps[st.ID] = map[string]any{"outputs": outputs, "outcome": outcome, "conclusion": conclusion}
		}
		for k, v := range readKV(t, files["GITHUB_ENV"]) {
			env[k] = v
		}
		if b, _ := os.ReadFile(files["GITHUB_PATH"]); len(b) > 0 {
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				extraPath = append([]string{l}, extraPath...)
			}
		}
		sum, _ := os.ReadFile(files["GITHUB_STEP_SUMMARY"])
		res.summary += string(sum)
		for _, l := range strings.Split(out, "\n") {
			if w, ok := strings.CutPrefix(l, "::warning"); ok {
				res.warnings = append(res.warnings, w)
			}
			if e, ok := strings.CutPrefix(l, "::error"); ok {
				res.errors = append(res.errors, e)
			}
		}
		res.log += fmt.Sprintf("=== %s (%s)\n%s\n", name, outcome, out)
		res.steps = append(res.steps, stepResult{name: name, outcome: outcome, conclusion: conclusion, output: out})
	}
	return res
}

// script runs a run: step as the hosted runner does.
func (r *ghRunner) script(st ghStep, env map[string]string, files map[string]string, extraPath []string) (string, error) {
	if st.Shell != "" && st.Shell != "bash" {
		return "", fmt.Errorf("shell %q not emulated", st.Shell)
	}
	f, err := os.CreateTemp(r.temp, "step-*.sh")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(st.Run); err != nil {
		return "", err
	}
	f.Close()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", f.Name())
	cmd.Dir = r.workspace
	if st.WorkingDir != "" {
		cmd.Dir = filepath.Join(r.workspace, st.WorkingDir)
	}
	path := strings.Join(append(append(append([]string{}, r.path...), extraPath...), os.Getenv("PATH")), string(os.PathListSeparator))
	vars := map[string]string{
		"PATH": path, "HOME": filepath.Join(r.temp, "home"), "CI": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_WORKSPACE": r.workspace, "RUNNER_TEMP": r.temp, "GITHUB_REPOSITORY": r.repo,
		"GITHUB_EVENT_NAME": r.event, "GITHUB_EVENT_PATH": filepath.Join(r.temp, "event.json"),
		"GITHUB_REF": r.ref, "GITHUB_RUN_ID": strconv.Itoa(r.runID), "TMPDIR": r.temp,
		"GOCACHE": os.Getenv("GOCACHE"), "LANG": "C.UTF-8",
	}
	for k, v := range r.extraEnv {
		vars[k] = v
	}
	for k, v := range files {
		vars[k] = v
	}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	sort.Strings(cmd.Env)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// uses emulates the actions the templates use.
func (r *ghRunner) uses(action string, with map[string]string) (string, error) {
	name, _, _ := strings.Cut(action, "@")
	switch name {
	case "actions/checkout", "actions/setup-go":
		// The workspace is the test's checkout; Go is on PATH.
		return "", nil
	case "actions/cache/restore":
		return r.cache.restore(r.workspace, with["path"], with["key"], with["restore-keys"])
	case "actions/cache/save":
		return r.cache.save(r.workspace, with["path"], with["key"])
	case "actions/upload-artifact":
		p := filepath.Join(r.workspace, with["path"])
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("::warning::No files were found with the provided path: %s", with["path"]), nil
		}
		return "uploaded " + with["path"], nil
	}
	return "", fmt.Errorf("action %s is not emulated here", action)
}

// actionsCache is a repository's Actions cache: folders under immutable
// keys; restore takes the exact key, else the newest entry whose key
// starts with a restore key.
type actionsCache struct {
	dir     string
	entries []string // keys, oldest first
}

func (c *actionsCache) restore(ws, path, key, restoreKeys string) (string, error) {
	hit := ""
	for _, k := range c.entries {
		if k == key {
			hit = k
		}
	}
	for _, prefix := range strings.Split(strings.TrimSpace(restoreKeys), "\n") {
		if hit != "" || prefix == "" {
			break
		}
		for _, k := range c.entries {
			if strings.HasPrefix(k, prefix) {
				hit = k // newest last
			}
		}
	}
	if hit == "" {
		return "Cache not found for input keys: " + key, nil
	}
	if err := copyTree(filepath.Join(c.dir, hit), filepath.Join(ws, path)); err != nil {
		return "", err
	}
	return "Cache restored from key: " + hit, nil
}

func (c *actionsCache) save(ws, path, key string) (string, error) {
	for _, k := range c.entries {
		if k == key {
			return "::warning::Failed to save: cache entry " + key + " already exists", nil
		}
	}
	if err := copyTree(filepath.Join(ws, path), filepath.Join(c.dir, key)); err != nil {
		return "", err
	}
	c.entries = append(c.entries, key)
	return "Cache saved with key: " + key, nil
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, fi.Mode().Perm())
	})
}

// readKV reads a GITHUB_OUTPUT or GITHUB_ENV file: name=value lines and
// name<<DELIM blocks.
func readKV(t *testing.T, path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if k, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[k] = strings.Join(val, "\n")
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out
}

// interpolate replaces each ${{ expr }} in s by its value as a string.
func (r *ghRunner) interpolate(t *testing.T, s string, ctx map[string]any) string {
	t.Helper()
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			t.Fatalf("unclosed ${{ in %q", s)
		}
		b.WriteString(s[:i])
		b.WriteString(toString(r.eval(t, s[i+3:i+j], ctx, true)))
		s = s[i+j+2:]
	}
}

func (r *ghRunner) eval(t *testing.T, src string, ctx map[string]any, jobOK bool) any {
	t.Helper()
	src = strings.TrimSpace(src)
	if strings.HasPrefix(src, "${{") && strings.HasSuffix(src, "}}") {
		src = src[3 : len(src)-2]
	}
	p := &exprParser{src: src, ctx: ctx, jobOK: jobOK}
	p.next()
	// An if: without a status function means success() && (it).
	hasStatus := false
	for _, f := range []string{"always(", "success(", "failure(", "cancelled("} {
		hasStatus = hasStatus || strings.Contains(src, f)
	}
	v := p.or()
	if p.err == nil && p.tok.kind != tEOF {
		p.err = fmt.Errorf("unexpected %q", p.tok.text)
	}
	if p.err != nil {
		t.Fatalf("expression %q: %v", src, p.err)
	}
	if !hasStatus && !jobOK {
		return false
	}
	return v
}

// The expression language, as far as workflows use it: literals, context
// paths, ! == != < <= > >= && ||, parentheses and a few functions.
type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp
)

type token struct {
	kind tokKind
	text string
}

type exprParser struct {
	src   string
	pos   int
	tok   token
	ctx   map[string]any
	jobOK bool
	err   error
}

func (p *exprParser) next() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.tok = token{kind: tEOF}
		return
	}
	c := p.src[p.pos]
	start := p.pos
	switch {
	case c == '\'':
		var b strings.Builder
		p.pos++
		for p.pos < len(p.src) {
			if p.src[p.pos] == '\'' {
				if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\'' {
					b.WriteByte('\'')
					p.pos += 2
					continue
				}
				break
			}
			b.WriteByte(p.src[p.pos])
			p.pos++
		}
		p.pos++
		p.tok = token{kind: tString, text: b.String()}
	case unicode.IsDigit(rune(c)):
		for p.pos < len(p.src) && (unicode.IsDigit(rune(p.src[p.pos])) || p.src[p.pos] == '.') {
			p.pos++
		}
		p.tok = token{kind: tNumber, text: p.src[start:p.pos]}
	case unicode.IsLetter(rune(c)) || c == '_':
		for p.pos < len(p.src) && (unicode.IsLetter(rune(p.src[p.pos])) || unicode.IsDigit(rune(p.src[p.pos])) || strings.ContainsRune("_-", rune(p.src[p.pos]))) {
			p.pos++
		}
		p.tok = token{kind: tIdent, text: p.src[start:p.pos]}
	default:
		for _, op := range []string{"==", "!=", "<=", ">=", "&&", "||", "!", "<", ">", "(", ")", ".", ",", "[", "]"} {
			if strings.HasPrefix(p.src[p.pos:], op) {
				p.pos += len(op)
				p.tok = token{kind: tOp, text: op}
				return
			}
		}
		p.err = fmt.Errorf("unexpected %q", c)
		p.tok = token{kind: tEOF}
	}
}

func (p *exprParser) isOp(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *exprParser) or() any {
	v := p.and()
	for p.isOp("||") {
		p.next()
		w := p.and()
		if !truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) and() any {
	v := p.cmp()
	for p.isOp("&&") {
		p.next()
		w := p.cmp()
		if truthy(v) {
			v = w
		}
	}
	return v
}

func (p *exprParser) cmp() any {
	v := p.unary()
	for p.tok.kind == tOp && cmpOps[p.tok.text] {
		op := p.tok.text
		p.next()
		w := p.unary()
		switch op {
		case "==":
			v = looseEqual(v, w)
		case "!=":
			v = !looseEqual(v, w)
		default:
			a, b := toNumber(v), toNumber(w)
			v = map[string]bool{"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
		}
	}
	return v
}

var cmpOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (p *exprParser) unary() any {
	if p.isOp("!") {
		p.next()
		return !truthy(p.unary())
	}
	return p.primary()
}

func (p *exprParser) primary() any {
	switch p.tok.kind {
	case tString:
		s := p.tok.text
		p.next()
		return s
	case tNumber:
		f, _ := strconv.ParseFloat(p.tok.text, 64)
		p.next()
		return f
	case tIdent:
		name := p.tok.text
		p.next()
		switch name {
		case "true":
			return true
		case "false":
			return false
		case "null":
			return nil
		}
		if p.isOp("(") {
			return p.call(name)
		}
		var v any = p.ctx[name]
		if _, ok := p.ctx[name]; !ok {
			p.err = fmt.Errorf("unknown context %q", name)
		}
		for {
			switch {
			case p.isOp("."):
				p.next()
				v = index(v, p.tok.text)
				p.next()
			case p.isOp("["):
				p.next()
				k := p.or()
				if !p.isOp("]") {
					p.err = fmt.Errorf("want ]")
				}
				p.next()
				v = index(v, toString(k))
			default:
				return v
			}
		}
	case tOp:
		if p.isOp("(") {
			p.next()
			v := p.or()
			if !p.isOp(")") {
				p.err = fmt.Errorf("want )")
			}
			p.next()
			return v
		}
	}
	p.err = fmt.Errorf("unexpected %q", p.tok.text)
	p.next()
	return nil
}

func (p *exprParser) call(name string) any {
	p.next() // (
	var args []any
	for !p.isOp(")") && p.err == nil && p.tok.kind != tEOF {
		args = append(args, p.or())
		if p.isOp(",") {
			p.next()
		}
	}
	p.next() // )
	arg := func(i int) string {
		if i < len(args) {
			return toString(args[i])
		}
		return ""
	}
	switch strings.ToLower(name) {
	case "always":
		return true
	case "success":
		return p.jobOK
	case "failure":
		return !p.jobOK
	case "cancelled":
		return false
	case "contains":
		return strings.Contains(strings.ToLower(arg(0)), strings.ToLower(arg(1)))
	case "startswith":
		return strings.HasPrefix(strings.ToLower(arg(0)), strings.ToLower(arg(1)))
	case "endswith":
		return strings.HasSuffix(strings.ToLower(arg(0)), strings.ToLower(arg(1)))
	case "format":
		s := arg(0)
		for i := 1; i < len(args); i++ {
			s = strings.ReplaceAll(s, "{"+strconv.Itoa(i-1)+"}", arg(i))
		}
		return s
	}
	p.err = fmt.Errorf("function %s() not emulated", name)
	return nil
}

func index(v any, k string) any {
	if m, ok := v.(map[string]any); ok {
		for mk, mv := range m {
			if strings.EqualFold(mk, k) {
				return mv
			}
		}
	}
	return nil
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

func toNumber(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		if strings.TrimSpace(x) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

// looseEqual is GitHub's ==: strings compare ignoring case; values of
// different types compare as numbers (null and the empty string are both 0).
func looseEqual(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return strings.EqualFold(as, bs)
	}
	if ab, ok := a.(bool); ok {
		if bb, ok := b.(bool); ok {
			return ab == bb
		}
	}
	return toNumber(a) == toNumber(b)
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return fmt.Sprint(v)
}
