package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: the loader never panics, and every failure is an *Errors whose
// entries carry a file and a message.
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"testdata/valid/*.yaml", "testdata/invalid/*.yaml", "../scenarios/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("version: 1\nmodels: [{name: x}]\nserver: {embedded: true}\nsweep: {concurrency: '1:3'}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("testdata/fuzz.yaml", data, testEnv)
		if err != nil {
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			for _, e := range errs.List {
				if e.File == "" || e.Msg == "" {
					t.Fatalf("incomplete error %+v", e)
				}
			}
			return
		}
		p, err := Expand(s)
		if err != nil {
			t.Fatalf("Expand after a successful Load: %v", err)
		}
		for _, pt := range p.Points {
			if pt.ID == "" || pt.BatchSize < 1 {
				t.Fatalf("bad point %+v", pt)
			}
		}
	})
}
