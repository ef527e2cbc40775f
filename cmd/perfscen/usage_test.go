package main

import (
	"strings"
	"testing"
)

// TestUsageErrors: every kind of command-line mistake cobra detects exits
// 2 and points at help, whatever cobra's wording.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"unknown command", []string{"rnu"}, `unknown command "rnu"`},
		{"suggestion", []string{"rnu"}, "Did you mean this?\n\trun"},
		{"unknown flag", []string{"run", "--nope", "x.yaml"}, "unknown flag: --nope"},
		{"unknown shorthand", []string{"run", "-Z", "x.yaml"}, "unknown shorthand flag"},
		{"flag needs a value", []string{"run", "x.yaml", "--out"}, "flag needs an argument"},
		{"bad flag value", []string{"baseline", "update", "--keep", "many", "x.yaml"}, "invalid argument"},
		{"too few arguments", []string{"plan"}, "see 'perfscen plan --help'"},
		{"too many arguments", []string{"version", "extra"}, "see 'perfscen version --help'"},
		{"subcommand arguments", []string{"compare", "a.json"}, "see 'perfscen compare --help'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstderr:\n%s", code, errOut)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
			}
		})
	}
}
