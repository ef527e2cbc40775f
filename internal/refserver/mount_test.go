package refserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// fakeMount serves /x/ with one model, "fake", whose only parameter is
// "word", which it answers with.
type fakeMount struct{ closed *bool }

func (fakeMount) Prefix() string         { return "/x/" }
func (fakeMount) Owns(model string) bool { return model == "fake" }
func (fakeMount) Check(params map[string]map[string]string) error {
	for k := range params["fake"] {
		if k != "word" {
			return fmt.Errorf("model %q: parameter %q: unknown", "fake", k)
		}
	}
	return nil
}
func (m fakeMount) Start(params map[string]map[string]string) (Mounted, error) {
	if params["fake"]["word"] == "fail" {
		return nil, errors.New("cannot start")
	}
	return fakeHandler{word: params["fake"]["word"], closed: m.closed}, nil
}

type fakeHandler struct {
	word   string
	closed *bool
}

func (h fakeHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, h.word) }
func (h fakeHandler) Close()                                           { *h.closed = true }

// A mount answers its prefix on the HTTP port beside KServe, takes its
// models' parameters from the shared map and stops with the server.
func TestMount(t *testing.T) {
	closed := false
	s := startServer(t, Options{Mounts: []Mount{fakeMount{&closed}}, ModelParams: map[string]map[string]string{
		"fake":   {"word": "hello"},
		"simple": {"added_latency": "1ms"},
	}})
	if r := do(t, s, "GET", "/x/anything", nil, nil); r.status != 200 || string(r.body) != "hello" {
		t.Fatalf("/x/: %d %s", r.status, r.body)
	}
	if r := do(t, s, "GET", "/v2/health/ready", nil, nil); r.status != 200 {
		t.Fatalf("/v2/health/ready: %d", r.status)
	}
	s.Close()
	if !closed {
		t.Error("the mount was not closed with the server")
	}
}

func TestMountParamsChecked(t *testing.T) {
	mounts := []Mount{fakeMount{new(bool)}}
	err := CheckOptions(Options{Mounts: mounts, Models: []string{"fake", "simple"}, ModelParams: map[string]map[string]string{"fake": {"nope": "1"}}})
	if err == nil || !strings.Contains(err.Error(), `model "fake": parameter "nope"`) {
		t.Fatalf("err = %v", err)
	}
	if err := CheckOptions(Options{Mounts: mounts, Models: []string{"fake"}, Repository: []string{"simple", "fake"}}); err != nil {
		t.Fatal(err)
	}
	// Without the mount its model is unknown.
	if err := CheckOptions(Options{ModelParams: map[string]map[string]string{"fake": {"word": "x"}}}); err == nil {
		t.Fatal("a mount's model was accepted without the mount")
	}
	if _, err := New(Options{Mounts: mounts, ModelParams: map[string]map[string]string{"fake": {"word": "fail"}}}); err == nil {
		t.Fatal("New succeeded with a mount that cannot start")
	}
}
