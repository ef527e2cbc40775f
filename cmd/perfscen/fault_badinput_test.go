package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

const badInputScenario = `version: 1
name: gated
server:
  embedded: true
models:
  - name: simple
load:
  mode: iterations
  iterations: 20
baseline:
  path: base.json
`

// A recorded run to feed the commands that read result files.
func recordedRun(t *testing.T, dir string) string {
	t.Helper()
	sc := writeFile(t, filepath.Join(dir, "gated.yaml"), badInputScenario)
	out := filepath.Join(dir, "run.json")
	if r := runFault(t, context.Background(), "run", sc, "-q", "--out", out, "--no-baseline"); r.code != exitcode.OK {
		t.Fatalf("recording a run: %s", r)
	}
	return out
}

// Broken baselines and result files from a newer perfscen are refused with
// exit 2 and a message naming the file and the fault; a bad baseline is
// refused before any load is sent.
func TestBadBaselinesAndResultsRefused(t *testing.T) {
	dir := t.TempDir()
	good := recordedRun(t, dir)
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "newer.json"),
		strings.Replace(string(goodBytes), `"schema_version": 1`, `"schema_version": 99`, 1))
	otherBase := filepath.Join(dir, "other-base.json")
	otherSc := writeFile(t, filepath.Join(dir, "other.yaml"), strings.Replace(badInputScenario, "name: gated", "name: other", 1))
	otherRun := filepath.Join(dir, "other-run.json")
	if r := runFault(t, context.Background(), "run", otherSc, "-q", "--out", otherRun, "--no-baseline"); r.code != 0 {
		t.Fatalf("recording the other run: %s", r)
	}
	if r := runFault(t, context.Background(), "baseline", "update", "--from", otherRun, "--baseline", otherBase); r.code != 0 {
		t.Fatalf("recording the other baseline: %s", r)
	}
	otherBytes, err := os.ReadFile(otherBase)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		baseline string // contents of base.json next to the scenario; "" for none
		args     []string
		want     []string
	}{
		{name: "malformed baseline", baseline: `{"format_version": 1, "scenario": "gated", `,
			args: []string{"run", "gated.yaml"}, want: []string{"base.json", "not a baseline file"}},
		{name: "baseline of another scenario", baseline: string(otherBytes),
			args: []string{"run", "gated.yaml"}, want: []string{"base.json", `scenario "other"`}},
		{name: "baseline format newer", baseline: `{"format_version": 42, "scenario": "gated"}`,
			args: []string{"run", "gated.yaml"}, want: []string{"format_version 42 is newer"}},
		{name: "baseline update from newer results",
			args: []string{"baseline", "update", "--from", "newer.json", "--baseline", "b2.json"},
			want: []string{"newer.json", "schema version 99 is newer"}},
		{name: "compare newer results",
			args: []string{"compare", "run.json", "newer.json"}, want: []string{"newer.json", "schema version 99"}},
		{name: "baseline update into another scenario's baseline",
			args: []string{"baseline", "update", "--from", "run.json", "--baseline", "other-base.json"},
			want: []string{"other"}},
		{name: "baseline show garbage", baseline: "\x00\x01garbage",
			args: []string{"baseline", "show", "base.json"}, want: []string{"base.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(dir, "base.json"))
			if c.baseline != "" {
				writeFile(t, filepath.Join(dir, "base.json"), c.baseline)
			}
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".yaml") {
					args[i] = filepath.Join(dir, a)
				}
			}
			if args[0] == "run" {
				args = append(args, "-q", "--out-dir", filepath.Join(dir, "out"))
			}
			r := runFault(t, context.Background(), args...)
			if r.code != exitcode.Invalid {
				t.Fatalf("want exit 2, got %s", r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if args[0] == "run" {
				if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
					t.Error("the run measured before refusing its baseline")
				}
				if r.elapsed > 5*time.Second {
					t.Errorf("refusal took %s", r.elapsed)
				}
			}
		})
	}
}
