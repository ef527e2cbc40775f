package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

var update = flag.Bool("update", false, "rewrite golden files")

func fixture(t *testing.T) (*result.Run, *verdict.Verdict) {
	t.Helper()
	run, err := result.ReadFile("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/verdict.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v verdict.Verdict
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return run, &v
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (go test -update, then git diff):\n%s", name, got)
	}
}

func render(t *testing.T, format string, run *result.Run, v *verdict.Verdict, opts Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, format, run, v, opts); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	run, v := fixture(t)
	tests := []struct {
		golden, format string
		v              *verdict.Verdict
		opts           Options
	}{
		{"console.golden", "console", v, Options{}},
		{"console_color.golden", "console", v, Options{Color: true}},
		{"console_noverdict.golden", "console", nil, Options{}},
		{"onnx.golden.csv", "csv", v, Options{Model: "onnx"}},
		{"onnx_verbose.golden.csv", "csv", v, Options{Model: "onnx", VerboseCSV: true}},
		{"trt_verbose.golden.csv", "csv", v, Options{Model: "trt", VerboseCSV: true}},
		{"junit.golden.xml", "junit", v, Options{}},
		{"summary.golden.md", "markdown", v, Options{}},
		{"github.golden", "github", v, Options{}},
		{"report.golden.json", "json", v, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			golden(t, tt.golden, render(t, tt.format, run, tt.v, tt.opts))
		})
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"console", "csv", "github", "html", "json", "junit", "markdown"}
	if got := Formats(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	if _, err := Lookup("pdf"); err == nil || !strings.Contains(err.Error(), "console, csv") {
		t.Errorf("Lookup(pdf) error = %v", err)
	}
	if err := Render(&bytes.Buffer{}, "json", nil, nil, Options{}); err == nil {
		t.Error("rendering a nil run succeeded")
	}
}

func TestRenderersDoNotMutate(t *testing.T) {
	run, v := fixture(t)
	before, _ := json.Marshal(run)
	vb, _ := json.Marshal(v)
	for _, f := range Formats() {
		opts := Options{Model: "onnx", VerboseCSV: true, Color: true}
		render(t, f, run, v, opts)
	}
	after, _ := json.Marshal(run)
	va, _ := json.Marshal(v)
	if !bytes.Equal(before, after) || !bytes.Equal(vb, va) {
		t.Error("a renderer modified its input")
	}
}
