package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	const dir = "@cmd/perfscen/testdata/verdicts/"
	tests := []struct {
		name   string
		args   []string
		code   int
		golden string
		stderr string
	}{
		{"regression", []string{"compare", dir + "old.json", dir + "new.json"}, 1, "compare-regression.golden", ""},
		{"same run", []string{"compare", dir + "old.json", dir + "old.json"}, 0, "compare-same.golden", ""},
		{"imported summaries", []string{"compare", dir + "old_imported.json", dir + "new_imported.json"}, 1, "compare-imported.golden", ""},
		{"malformed input", []string{"compare", dir + "old.json", dir + "malformed.json"}, 2, "", "malformed.json"},
		{"missing file", []string{"compare", dir + "old.json", dir + "nope.json"}, 2, "", "nope.json"},
		{"one argument", []string{"compare", dir + "old.json"}, 2, "", "accepts 2 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if tt.golden != "" {
				golden(t, filepath.Join("testdata", "verdicts", tt.golden), out)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
			}
		})
	}
}
