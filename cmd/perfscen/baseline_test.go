package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var timestamps = regexp.MustCompile(`recorded \S+`)

func TestBaselineUpdateAndShow(t *testing.T) {
	const dir = "@cmd/perfscen/testdata/verdicts/"
	tmp := t.TempDir()
	path := filepath.Join(tmp, "demo.json")
	clean := func(s string) string {
		return timestamps.ReplaceAllString(strings.ReplaceAll(s, tmp, "TMP"), "recorded TIME")
	}
	var log strings.Builder
	for i := 0; i < 6; i++ {
		code, out, errOut := runCLI(t, "baseline", "update", "--from", fmt.Sprintf("%shistory%d.json", dir, i), "--baseline", path, "--keep", "5")
		if code != 0 {
			t.Fatalf("update %d: exit %d: %s", i, code, errOut)
		}
		fmt.Fprintf(&log, "$ baseline update #%d\n%s", i, clean(out))
	}
	golden(t, filepath.Join("testdata", "verdicts", "baseline-update.golden"), log.String())

	code, out, errOut := runCLI(t, "baseline", "show", path)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	golden(t, filepath.Join("testdata", "verdicts", "baseline-show.golden"), clean(out))
}

func TestBaselineUpdateErrors(t *testing.T) {
	const dir = "@cmd/perfscen/testdata/verdicts/"
	path := filepath.Join(t.TempDir(), "demo.json")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unstable refused", []string{"baseline", "update", "--from", dir + "unstable.json", "--baseline", path}, 2, "--force"},
		{"unstable forced", []string{"baseline", "update", "--from", dir + "unstable.json", "--baseline", path, "--force"}, 0, ""},
		{"no --from", []string{"baseline", "update"}, 2, "--from"},
		{"malformed run", []string{"baseline", "update", "--from", dir + "malformed.json", "--baseline", path}, 2, "malformed.json"},
		{"show malformed", []string{"baseline", "show", dir + "malformed.json"}, 2, "not a baseline file"},
		{"show missing", []string{"baseline", "show", dir + "none.json"}, 2, "none.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d stderr %q, want %d containing %q", code, errOut, tt.code, tt.stderr)
			}
		})
	}
}
