package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baseline history reports the shipped baseline's series, writes the
// pages it is asked for, and ends 2 naming the file or flag on bad input.
func TestBaselineHistory(t *testing.T) {
	const qs = "../../baselines/quickstart.json"
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "r.json"), []byte(`{"x":`), 0o644); err != nil {
		t.Fatal(err)
	}
	html, md := filepath.Join(dir, "h.html"), filepath.Join(dir, "h.md")
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		has   []string
		files []string
	}{
		{name: "stdout", args: []string{qs}, has: []string{"# History of quickstart", "### simple/c=1 · throughput", "### simple/c=1 · p99"}},
		{name: "files", args: []string{qs, "--html", html, "--markdown", md}, has: []string{"history written to " + html}, files: []string{html, md}},
		{name: "empty results folder", args: []string{qs, "--results", dir + "/none-here"}, code: 2, has: []string{"--results: "}},
		{name: "bad result", args: []string{qs, "--results", bad}, code: 2, has: []string{filepath.Join(bad, "r.json") + ": not a result document"}},
		{name: "no baseline", args: []string{dir + "/missing.json"}, code: 2, has: []string{"missing.json"}},
		{name: "unknown metric", args: []string{qs, "--metric", "p51"}, code: 2, has: []string{`--metric "p51": not a metric`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"baseline", "history"}, c.args...)...)
			out := stdout + stderr
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, out)
			}
			for _, s := range c.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q\n%s", s, out)
				}
			}
			for _, f := range c.files {
				if st, err := os.Stat(f); err != nil || st.Size() == 0 {
					t.Errorf("%s not written: %v", f, err)
				}
			}
		})
	}
}
