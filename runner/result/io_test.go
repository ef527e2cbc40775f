package result

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReadRoundTrip(t *testing.T) {
	run, err := ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.RunID != run.RunID || len(back.Points) != len(run.Points) || back.Points[0].Summary.Requests != run.Points[0].Summary.Requests {
		t.Errorf("round trip changed the run: %+v", back.Points)
	}
	// Figures are written for readers, and dropped when read back: the
	// trials are what they are derived from.
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"figures"`) || back.Points[0].Figures != nil {
		t.Errorf("figures: written %v, read back %v", strings.Contains(string(b), `"figures"`), back.Points[0].Figures)
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"not json", `{"schema_version": 1,`, "not a result document"},
		{"no version", `{"scenario": "x"}`, "no schema_version field"},
		{"newer", `{"schema_version": 99}`, "newer than this perfscen understands"},
		{"zero", `{"schema_version": 0}`, "invalid schema_version 0"},
		{"unknown field", `{"schema_version": 1, "scenaro": "x"}`, `unknown field "scenaro"`},
	}
	for _, c := range cases {
		_, err := Decode("r.json", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "r.json: ") {
			t.Errorf("%s: err = %v, want r.json: …%s", c.name, err, c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "reading results") {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile("testdata/example.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version": 1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		run, err := Decode("f.json", b)
		if err == nil && run == nil {
			t.Fatal("nil run without error")
		}
	})
}
