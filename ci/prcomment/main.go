// Command prcomment keeps one perfscen comment on a pull request (GitHub)
// or merge request (GitLab) and updates it in place on every push: the
// comment starts with a hidden marker, found among the existing comments,
// so a push edits it instead of adding another. The CI templates in ci/
// call it with the body ci/perfscen-gate.sh wrote:
//
//	prcomment --body-file out/perfscen/comment.md
//	prcomment --marker perfscen-ab --body-file out/perfscen/comment.md
//
// GitHub Actions (GITHUB_ACTIONS=true): GITHUB_TOKEN (or GH_TOKEN),
// GITHUB_REPOSITORY, GITHUB_API_URL, and the pull request's number from
// --pr, else from the event file (GITHUB_EVENT_PATH). GitLab CI
// (GITLAB_CI=true): PERFSCEN_NOTE_TOKEN (a project access token with api
// scope: CI_JOB_TOKEN cannot write notes), CI_API_V4_URL, CI_PROJECT_ID
// and CI_MERGE_REQUEST_IID.
//
// Exit codes: 0 posted or updated; 1 the platform refused or could not be
// reached (a pull request from a fork gets a read-only token: the message
// says so, and the templates let the job pass); 2 a missing setting.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr, http.DefaultClient))
}

// Markers look like this, on the comment's first line; NAME tells apart
// the comments of several gates on one pull request (the history gate and
// the same-job A/B).
func marker(name string) string { return "<!-- perfscen-comment:" + name + " -->" }

// The platforms' limits on a comment's length (GitHub: 65,536 characters;
// GitLab: 1,000,000): a longer body is refused outright, so it is cut.
const (
	githubLimit = 65536
	gitlabLimit = 1000000
)

// usageError is a missing or bad setting: exit 2.
type usageError struct{ error }

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, hc *http.Client) int {
	fs := flag.NewFlagSet("prcomment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("marker", "perfscen", "which perfscen comment this is (letters, digits, '-', '_')")
	bodyFile := fs.String("body-file", "", "the comment's Markdown")
	pr := fs.Int("pr", 0, "the pull request's number (GitHub; default: from $GITHUB_EVENT_PATH)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	err := post(ctx, *name, *bodyFile, *pr, getenv, stdout, hc)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "prcomment: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func post(ctx context.Context, name, bodyFile string, pr int, getenv func(string) string, stdout io.Writer, hc *http.Client) error {
	if !validName(name) {
		return usageError{fmt.Errorf("--marker %q: use letters, digits, '-' and '_'", name)}
	}
	if bodyFile == "" {
		return usageError{errors.New("--body-file: name the comment's Markdown file")}
	}
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return usageError{fmt.Errorf("--body-file: %w", err)}
	}
	var p platform
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		p, err = newGitHub(getenv, pr)
	case getenv("GITLAB_CI") == "true":
		p, err = newGitLab(getenv)
	default:
		err = usageError{errors.New("neither GitHub Actions (GITHUB_ACTIONS=true) nor GitLab CI (GITLAB_CI=true): no pull request to comment on")}
	}
	if err != nil {
		return err
	}
	c := client{hc: hc, p: p}
	m := marker(name)
	text := fit(m+"\n"+string(body), p.limit())
	id, err := c.find(ctx, m)
	if err != nil {
		return err
	}
	if id != "" {
		if err := c.send(ctx, http.MethodPut, p.commentURL(id), text); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "prcomment: updated comment %s on %s\n", id, p.what())
		return nil
	}
	if err := c.send(ctx, http.MethodPost, p.listURL(), text); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "prcomment: posted a comment on %s\n", p.what())
	return nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// fit cuts text at a line boundary so that it and a closing note fit in
// limit characters.
func fit(text string, limit int) string {
	if len([]rune(text)) <= limit {
		return text
	}
	const note = "\n\n_Cut to fit the comment limit: the job summary and the report artifact have all of it._\n"
	r := []rune(text)[:limit-len([]rune(note))]
	cut := string(r)
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return cut + note
}

// platform is where the comment lives: its URLs, credentials and limit.
type platform interface {
	listURL() string
	commentURL(id string) string
	// method is the HTTP method that edits a comment.
	editMethod() string
	auth(r *http.Request)
	// payload is the JSON body of a create or edit.
	payload(text string) ([]byte, error)
	// page reads one page of comments and the next page's URL ("" at the end).
	page(resp *http.Response, b []byte) (comments []comment, next string, err error)
	limit() int
	what() string
}

type comment struct {
	id   string
	body string
}

type client struct {
	hc *http.Client
	p  platform
}

// find returns the id of the comment that starts with m, "" if none.
func (c client) find(ctx context.Context, m string) (string, error) {
	url := c.p.listURL()
	for pages := 0; url != "" && pages < 100; pages++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		c.p.auth(req)
		resp, b, err := c.do(req)
		if err != nil {
			return "", fmt.Errorf("listing the comments on %s: %w", c.p.what(), err)
		}
		cs, next, err := c.p.page(resp, b)
		if err != nil {
			return "", fmt.Errorf("listing the comments on %s: %w", c.p.what(), err)
		}
		for _, cm := range cs {
			if strings.HasPrefix(cm.body, m) {
				return cm.id, nil
			}
		}
		url = next
	}
	return "", nil
}

// send creates (POST) or edits (PUT, the platform's edit method) a comment.
func (c client) send(ctx context.Context, method, url, text string) error {
	verb := "posting a comment on"
	if method == http.MethodPut {
		method, verb = c.p.editMethod(), "updating the comment on"
	}
	b, err := c.p.payload(text)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.p.auth(req)
	if _, _, err := c.do(req); err != nil {
		return fmt.Errorf("%s %s: %w", verb, c.p.what(), err)
	}
	return nil
}

// do sends req and reads the answer; a status other than 2xx is an error
// that says what it means for a CI job.
func (c client) do(req *http.Request) (*http.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	resp, err := c.hc.Do(req.WithContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, b, nil
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return nil, nil, fmt.Errorf("HTTP %d (%s): the token cannot write comments here; a pull request from a fork gets a read-only token, so its verdict is in the job summary and the reports only", resp.StatusCode, msg)
	}
	return nil, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
}

type github struct {
	api, repo, token string
	pr               int
}

func newGitHub(getenv func(string) string, pr int) (*github, error) {
	g := &github{api: strings.TrimRight(getenv("GITHUB_API_URL"), "/"), repo: getenv("GITHUB_REPOSITORY"), token: getenv("GITHUB_TOKEN"), pr: pr}
	if g.token == "" {
		g.token = getenv("GH_TOKEN")
	}
	if g.api == "" {
		g.api = "https://api.github.com"
	}
	if g.repo == "" {
		return nil, usageError{errors.New("GITHUB_REPOSITORY is not set")}
	}
	if g.token == "" {
		return nil, usageError{errors.New("GITHUB_TOKEN is not set: give the step env GITHUB_TOKEN: ${{ github.token }}")}
	}
	if g.pr == 0 {
		n, err := eventPR(getenv("GITHUB_EVENT_PATH"))
		if err != nil {
			return nil, usageError{err}
		}
		g.pr = n
	}
	return g, nil
}

// eventPR reads the pull request's number from the event that started
// the workflow.
func eventPR(path string) (int, error) {
	if path == "" {
		return 0, errors.New("no --pr and no GITHUB_EVENT_PATH: which pull request?")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the event: %w", err)
	}
	var ev struct {
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if ev.PullRequest == nil || ev.PullRequest.Number == 0 {
		return 0, fmt.Errorf("%s: not a pull_request event: no pull request to comment on", path)
	}
	return ev.PullRequest.Number, nil
}

func (g *github) listURL() string {
	return fmt.Sprintf("%s/repos/%s/issues/%d/comments?per_page=100", g.api, g.repo, g.pr)
}
func (g *github) commentURL(id string) string {
	return fmt.Sprintf("%s/repos/%s/issues/comments/%s", g.api, g.repo, id)
}
func (g *github) editMethod() string { return http.MethodPatch }
func (g *github) auth(r *http.Request) {
	r.Header.Set("Authorization", "Bearer "+g.token)
	r.Header.Set("Accept", "application/vnd.github+json")
	r.Header.Set("X-GitHub-Api-Version", "2022-11-28")
}
func (g *github) payload(text string) ([]byte, error) {
	return json.Marshal(map[string]string{"body": text})
}
func (g *github) page(resp *http.Response, b []byte) ([]comment, string, error) {
	var cs []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, "", err
	}
	out := make([]comment, len(cs))
	for i, c := range cs {
		out[i] = comment{id: strconv.FormatInt(c.ID, 10), body: c.Body}
	}
	return out, nextLink(resp.Header.Get("Link")), nil
}
func (g *github) limit() int   { return githubLimit }
func (g *github) what() string { return fmt.Sprintf("pull request #%d of %s", g.pr, g.repo) }

// nextLink is the rel="next" URL of a Link header, "" without one.
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		seg := strings.Split(part, ";")
		if len(seg) < 2 {
			continue
		}
		for _, p := range seg[1:] {
			if strings.TrimSpace(p) == `rel="next"` {
				return strings.Trim(strings.TrimSpace(seg[0]), "<>")
			}
		}
	}
	return ""
}

type gitlab struct {
	api, project, mr, token string
}

func newGitLab(getenv func(string) string) (*gitlab, error) {
	g := &gitlab{api: strings.TrimRight(getenv("CI_API_V4_URL"), "/"), project: getenv("CI_PROJECT_ID"), mr: getenv("CI_MERGE_REQUEST_IID"), token: getenv("PERFSCEN_NOTE_TOKEN")}
	for _, v := range []struct{ name, val string }{{"CI_API_V4_URL", g.api}, {"CI_PROJECT_ID", g.project}, {"CI_MERGE_REQUEST_IID", g.mr}} {
		if v.val == "" {
			return nil, usageError{fmt.Errorf("%s is not set (a merge-request pipeline sets it)", v.name)}
		}
	}
	if g.token == "" {
		return nil, usageError{errors.New("PERFSCEN_NOTE_TOKEN is not set: a project access token with api scope (CI_JOB_TOKEN cannot write notes)")}
	}
	return g, nil
}

func (g *gitlab) listURL() string {
	return fmt.Sprintf("%s/projects/%s/merge_requests/%s/notes?per_page=100&sort=asc", g.api, g.project, g.mr)
}
func (g *gitlab) commentURL(id string) string {
	return fmt.Sprintf("%s/projects/%s/merge_requests/%s/notes/%s", g.api, g.project, g.mr, id)
}
func (g *gitlab) editMethod() string   { return http.MethodPut }
func (g *gitlab) auth(r *http.Request) { r.Header.Set("PRIVATE-TOKEN", g.token) }
func (g *gitlab) payload(text string) ([]byte, error) {
	return json.Marshal(map[string]string{"body": text})
}
func (g *gitlab) page(resp *http.Response, b []byte) ([]comment, string, error) {
	var cs []struct {
		ID     int64  `json:"id"`
		Body   string `json:"body"`
		System bool   `json:"system"`
	}
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, "", err
	}
	var out []comment
	for _, c := range cs {
		if !c.System {
			out = append(out, comment{id: strconv.FormatInt(c.ID, 10), body: c.Body})
		}
	}
	next := ""
	if n := resp.Header.Get("X-Next-Page"); n != "" {
		next = g.listURL() + "&page=" + n
	}
	return out, next, nil
}
func (g *gitlab) limit() int { return gitlabLimit }
func (g *gitlab) what() string {
	return fmt.Sprintf("merge request !%s of project %s", g.mr, g.project)
}
