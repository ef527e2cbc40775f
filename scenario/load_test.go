package scenario

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testEnv is the environment the fixtures may reference.
func testEnv(name string) string {
	return map[string]string{"TRITON_TOKEN": "s3cret", "TENANT": "team-a"}[name]
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s mismatch (-want +got), run go test -update if intended:\n%s", path, d)
	}
}

// Each invalid fixture's full error report is pinned in NAME.golden.
func TestInvalidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := LoadPlan(f, testEnv)
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want *Errors, got %T: %v", err, err)
			}
			for _, e := range errs.List {
				if e.File != f || e.Line == 0 || e.Msg == "" {
					t.Errorf("error without file/position/message: %+v", e)
				}
			}
			golden(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(err.Error()+"\n"))
		})
	}
}

// The three mistakes are reported together, in file order, at their lines.
func TestThreeMistakes(t *testing.T) {
	_, err := Load("testdata/invalid/three-mistakes.yaml", nil)
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want *Errors, got %v", err)
	}
	type loc struct {
		Line int
		Path string
	}
	var got []loc
	for _, e := range errs.List {
		got = append(got, loc{e.Line, e.Path})
	}
	want := []loc{{7, "models[0].batch_size"}, {9, "load.concurency"}, {11, "measurement.window"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if !strings.Contains(errs.List[1].Msg, "did you mean `concurrency`?") {
		t.Errorf("no suggestion: %s", errs.List[1].Msg)
	}
}

// Each valid fixture's expanded plan is pinned in NAME.plan.json.
func TestValidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := LoadPlan(f, testEnv)
			if err != nil {
				t.Fatalf("%v", err)
			}
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(f, ".yaml")+".plan.json", append(b, '\n'))
		})
	}
}

// A YAML syntax error names the line and column of the token the parser
// could not place, not the line (counted from 0) where the enclosing
// construct began.
func TestSyntaxErrorsHaveLineAndColumn(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"version: 1\nmodels:\n  - name: simple\n    batch_size: [1\nload: {concurrency: 1}\n", "s.yaml:5:1: invalid YAML"},
		{"version: 1\nname: \"y\nmodels: [{name: simple}]\n", "s.yaml:2:7: invalid YAML"},
		{"version: 1\nmodels:\n  - name: simple\n  batch_size: 2\n", "s.yaml:4:3: invalid YAML"},
	} {
		_, err := Parse("s.yaml", []byte(tt.src), nil)
		var errs *Errors
		if !errors.As(err, &errs) || len(errs.List) != 1 || !strings.HasPrefix(errs.List[0].Error(), tt.want) {
			t.Errorf("%q: got %v, want one error starting %q", tt.src, err, tt.want)
		}
	}
}

// One message per mistake: a negative value in a swept list is reported
// once, at the item.
func TestOneMessagePerMistake(t *testing.T) {
	_, err := Parse("s.yaml", []byte("version: 1\nserver: {url: localhost:8000}\nmodels: [{name: simple}]\nsweep:\n  concurrency: [-1, 2]\n"), nil)
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.List) != 1 || !strings.HasPrefix(errs.List[0].Error(), "s.yaml:5:17: sweep.concurrency[0]") {
		t.Errorf("got %v", err)
	}
}
