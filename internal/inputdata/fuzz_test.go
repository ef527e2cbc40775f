package inputdata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadJSON feeds arbitrary bytes through the whole JSON path: it must
// never panic, must fail only with *Error, and whatever loads must be
// internally consistent.
func FuzzLoadJSON(f *testing.F) {
	for _, dir := range []string{"testdata", "testdata/errors"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	specs := []ModelSpec{simple, variable, strings1, mixedTypes}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "data.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, spec := range specs {
			for _, batch := range []int{1, 2} {
				if spec.MaxBatchSize == 0 && batch > 1 {
					continue
				}
				d, err := Load(spec, Source{Kind: KindJSON, Paths: []string{path}, BatchSize: batch})
				if err != nil {
					var ie *Error
					if !errors.As(err, &ie) {
						t.Fatalf("error %v is %T, not *Error", err, err)
					}
					continue
				}
				for _, s := range d.Streams {
					for _, st := range s {
						for _, x := range append(st.Inputs, st.Expected...) {
							if err := x.Check(); err != nil {
								t.Fatalf("loaded an inconsistent tensor: %v", err)
							}
						}
					}
				}
			}
		}
	})
}

// FuzzParseJSON checks the position-aware scanner agrees with encoding/json
// on what is valid JSON (apart from the extensions it accepts on purpose).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1, -2.5e3, "a\u00e9", true, null]`, `{"a": {"b": [[]]}}`, `"\ud800"`, `01`, `{"a":1,}`, `[NaN, -Infinity]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := parseJSON(b)
		valid := jsonValid(b)
		if err == nil && !valid && !hasExtension(b) {
			t.Fatalf("scanner accepted invalid JSON %q", b)
		}
		var se *syntaxError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("error %T is not a syntaxError", err)
		}
		if err != nil && valid && !isDupKey(err) && !isTooDeep(err) {
			t.Fatalf("scanner rejected valid JSON %q: %v", b, err)
		}
	})
}
