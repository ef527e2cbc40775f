package exitcode

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/failure"
)

func TestOf(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"unmarked", base, Environment},
		{"invalid input", fmt.Errorf("scenario: %w", failure.Invalid(base)), Invalid},
		{"environment", failure.Env(base), Environment},
		{"code attached by cmd", With(CheckFailed, base), CheckFailed},
		{"cmd's code outranks the kind", With(Inconclusive, failure.Invalid(base)), Inconclusive},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("%s: Of = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestOnlyCmdImports keeps the exit-code table out of library packages:
// they mark errors with internal/failure and cmd/perfscen maps them. The
// one other user is internal/scenariorun, the shell under cmd that
// records a run's verdict with its exit code (ForOutcome).
func TestOnlyCmdImports(t *testing.T) {
	const self = "github.com/perfscen/perfscen/internal/exitcode"
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "cmd" || rel == filepath.Join("internal", "scenariorun") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports internal/exitcode; return a failure-marked error and let cmd/perfscen map it", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
