package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeAPI is the comment API of GitHub or GitLab as far as prcomment uses
// it: list (paginated, two comments a page), create, edit; readOnly
// answers every write with 403, as GitHub does for a fork's token.
type fakeAPI struct {
	mu       sync.Mutex
	gitlab   bool
	readOnly bool
	comments []map[string]any // id, body, (gitlab) system
	next     int64
	writes   []string // "POST", "PATCH 3", …
	auth     []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gitlab {
		f.auth = append(f.auth, r.Header.Get("PRIVATE-TOKEN"))
	} else {
		f.auth = append(f.auth, r.Header.Get("Authorization"))
	}
	list, item := "/repos/o/r/issues/7/comments", "/repos/o/r/issues/comments/"
	edit := http.MethodPatch
	if f.gitlab {
		list, item, edit = "/api/v4/projects/42/merge_requests/7/notes", "/api/v4/projects/42/merge_requests/7/notes/", http.MethodPut
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == list:
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page == 0 {
			page = 1
		}
		lo, hi := 2*(page-1), 2*page
		if hi >= len(f.comments) {
			hi = len(f.comments)
		} else if f.gitlab {
			w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		} else {
			w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?per_page=100&page=%d>; rel="next", <http://x/last>; rel="last"`, r.Host, list, page+1))
		}
		if lo > hi {
			lo = hi
		}
		json.NewEncoder(w).Encode(f.comments[lo:hi])
	case r.Method == http.MethodPost && r.URL.Path == list, r.Method == edit && strings.HasPrefix(r.URL.Path, item):
		if f.readOnly {
			http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
			return
		}
		var in struct{ Body string }
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &in); err != nil || in.Body == "" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		if r.Method == http.MethodPost {
			f.next++
			f.comments = append(f.comments, map[string]any{"id": f.next, "body": in.Body})
			f.writes = append(f.writes, "POST")
			w.WriteHeader(http.StatusCreated)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, item)
		for _, c := range f.comments {
			if fmt.Sprint(c["id"]) == id {
				c["body"] = in.Body
				f.writes = append(f.writes, r.Method+" "+id)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.Error(w, r.Method+" "+r.URL.String(), http.StatusTeapot)
	}
}

func (f *fakeAPI) seed(bodies ...string) {
	for _, b := range bodies {
		f.next++
		c := map[string]any{"id": f.next, "body": b}
		if f.gitlab && strings.HasPrefix(b, "system:") {
			c["system"] = true
		}
		f.comments = append(f.comments, c)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func runTool(t *testing.T, getenv func(string) string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, getenv, &out, &errb, http.DefaultClient)
	return code, out.String() + errb.String()
}

func writeBody(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "comment.md")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func githubEnv(t *testing.T, url string) map[string]string {
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, []byte(`{"action":"synchronize","pull_request":{"number":7}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_API_URL": url, "GITHUB_REPOSITORY": "o/r",
		"GITHUB_TOKEN": "tok", "GITHUB_EVENT_PATH": ev}
}

// One comment per pull request and marker, whatever the number of pushes:
// the first run posts it, later runs find it by its marker (on any page)
// and edit it in place; another marker's comment is left alone.
func TestOneCommentUpdatedInPlace(t *testing.T) {
	for _, gl := range []bool{false, true} {
		t.Run(map[bool]string{false: "github", true: "gitlab"}[gl], func(t *testing.T) {
			api := &fakeAPI{gitlab: gl}
			// Three pages of other people's comments (and GitLab's system
			// notes) before ours will be.
			api.seed("looks good", "system: added 1 commit", "<!-- perfscen-comment:perfscen-ab -->\nA/B", "nit: typo", "lgtm")
			srv := httptest.NewServer(api)
			defer srv.Close()
			e := githubEnv(t, srv.URL)
			if gl {
				e = map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": srv.URL + "/api/v4", "CI_PROJECT_ID": "42",
					"CI_MERGE_REQUEST_IID": "7", "PERFSCEN_NOTE_TOKEN": "tok"}
			}
			for i, verdict := range []string{"FAIL", "PASS", "PASS again"} {
				code, out := runTool(t, env(e), "--body-file", writeBody(t, "**perfscen:** "+verdict+"\n"))
				if code != 0 {
					t.Fatalf("push %d: exit %d: %s", i+1, code, out)
				}
			}
			edit := "PATCH 6"
			if gl {
				edit = "PUT 6"
			}
			if want := []string{"POST", edit, edit}; fmt.Sprint(api.writes) != fmt.Sprint(want) {
				t.Errorf("writes = %v, want %v", api.writes, want)
			}
			var ours []string
			for _, c := range api.comments {
				if b := c["body"].(string); strings.HasPrefix(b, "<!-- perfscen-comment:perfscen -->") {
					ours = append(ours, b)
				}
			}
			if len(ours) != 1 || ours[0] != "<!-- perfscen-comment:perfscen -->\n**perfscen:** PASS again\n" {
				t.Errorf("our comments: %q", ours)
			}
			if b := api.comments[2]["body"]; b != "<!-- perfscen-comment:perfscen-ab -->\nA/B" {
				t.Errorf("the A/B comment was changed: %q", b)
			}
			for _, a := range api.auth {
				if a != "tok" && a != "Bearer tok" {
					t.Errorf("request authorized with %q", a)
				}
			}
		})
	}
}

// A fork's pull request gets a read-only token: the write is refused
// (exit 1) with a message that says why, so the job's step can be allowed
// to fail without hiding it.
func TestReadOnlyToken(t *testing.T) {
	api := &fakeAPI{readOnly: true}
	srv := httptest.NewServer(api)
	defer srv.Close()
	code, out := runTool(t, env(githubEnv(t, srv.URL)), "--body-file", writeBody(t, "x"))
	if code != 1 || !strings.Contains(out, "HTTP 403") || !strings.Contains(out, "fork gets a read-only token") {
		t.Errorf("exit %d: %s", code, out)
	}
}

// Missing settings exit 2 and name what is missing.
func TestMissingSettings(t *testing.T) {
	body := writeBody(t, "x")
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{}, []string{"--body-file", body}, "neither GitHub Actions"},
		{map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r"}, []string{"--body-file", body}, "GITHUB_TOKEN is not set"},
		{map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "t"}, []string{"--body-file", body}, "which pull request"},
		{map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": "http://x", "CI_PROJECT_ID": "1"}, []string{"--body-file", body}, "CI_MERGE_REQUEST_IID is not set"},
		{map[string]string{"GITHUB_ACTIONS": "true"}, []string{"--marker", "a b", "--body-file", body}, "--marker"},
		{map[string]string{"GITHUB_ACTIONS": "true"}, nil, "--body-file"},
	} {
		if code, out := runTool(t, env(tc.env), tc.args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v %v: exit %d, %q; want 2 and %q", tc.env, tc.args, code, out, tc.want)
		}
	}
}

// A body over the platform's limit is cut at a line, with a note, instead
// of being refused.
func TestFit(t *testing.T) {
	long := strings.Repeat("| a | b |\n", 10000)
	got := fit(long, githubLimit)
	if n := len([]rune(got)); n > githubLimit || !strings.HasSuffix(got, "report artifact have all of it._\n") || !strings.Contains(got, "| a | b |\n\n_Cut") {
		t.Errorf("fit: %d runes, tail %q", n, got[len(got)-120:])
	}
	if fit("short", githubLimit) != "short" {
		t.Error("a short body was changed")
	}
}

// nextLink reads whatever a server sends as a Link header: it never
// panics, and a URL it returns is one of the header's <…> targets marked
// rel="next".
func FuzzNextLink(f *testing.F) {
	f.Add(`<https://api.github.com/repositories/1/issues/7/comments?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`)
	f.Add(`<a>; rel="prev"; rel="next"`)
	f.Add(`;;,<>`)
	f.Fuzz(func(t *testing.T, h string) {
		got := nextLink(h)
		if got == "" {
			return
		}
		if !strings.Contains(h, got) || !strings.Contains(h, `rel="next"`) {
			t.Errorf("nextLink(%q) = %q", h, got)
		}
	})
}

func TestNextLink(t *testing.T) {
	for h, want := range map[string]string{
		`<https://x/a?page=2>; rel="next", <https://x/a?page=9>; rel="last"`: "https://x/a?page=2",
		`<https://x/a?page=1>; rel="prev", <https://x/a?page=3>; rel="next"`: "https://x/a?page=3",
		`<https://x/a?page=1>; rel="first"`:                                  "",
		``:                                                                   "",
	} {
		if got := nextLink(h); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", h, got, want)
		}
	}
}
