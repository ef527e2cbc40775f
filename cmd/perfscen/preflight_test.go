package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/result"
)

// Problem 9: a model the live server does not have is the scenario's
// mistake: exit 2 naming it and the server's models, not exit 3.
func TestRunUnknownModelOnLiveServer(t *testing.T) {
	srv := startServer(t, refserver.Options{Models: []string{"simple", "delay"}, Repository: []string{"simple", "delay"}})
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: live-unknown
server:
  url: `+srv.HTTPAddr()+`
  timeout: 2s
models:
  - name: simpel
load:
  mode: iterations
  iterations: 5
`)
	r := runFault(t, context.Background(), "run", sc, "-q", "--out-dir", dir)
	if r.code != exitcode.Invalid {
		t.Fatalf("want exit 2, got %s", r)
	}
	for _, want := range []string{`"simpel"`, "not on the server", "delay, simple"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// A token-length sweep gives one CSV per length set, like other swept
// dimensions besides the load.
func TestCSVGroupKeysSplitTokenLengths(t *testing.T) {
	pt := func(c, in, out string) result.Point {
		return result.Point{Model: "llm", Coords: map[string]string{"concurrency": c, "batch_size": "1", "protocol": "http",
			"shared_memory": "none", "input_tokens": in, "output_tokens": out}}
	}
	got := csvGroupKeys([]result.Point{pt("4", "128", "64"), pt("16", "128", "64"), pt("4", "512", "64"), pt("16", "512", "64")})
	want := []string{"llm.input_tokens=128", "llm.input_tokens=128", "llm.input_tokens=512", "llm.input_tokens=512"}
	if !slices.Equal(got, want) {
		t.Errorf("keys %v, want %v", got, want)
	}
}

// A server/alias arm names a CSV file, never a directory.
func TestCSVGroupKeysOfServerArms(t *testing.T) {
	pts := []result.Point{
		{Model: "released/delay", Coords: map[string]string{"batch_size": "1"}},
		{Model: "candidate/delay", Coords: map[string]string{"batch_size": "1"}},
	}
	got := csvGroupKeys(pts)
	want := []string{"released.delay", "candidate.delay"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("key %d: %q, want %q", i, got[i], want[i])
		}
	}
}
