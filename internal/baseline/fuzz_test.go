package baseline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func FuzzLoadBaseline(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	good := New("demo")
	if _, err := Update(good, mkRun("demo", 1, 2), UpdateOptions{Now: time.Unix(1, 0)}); err != nil {
		f.Fatal(err)
	}
	b, _ := Encode(good)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		bf, err := Decode("fuzz.json", data)
		if err != nil {
			return
		}
		// whatever decodes must survive encoding and decoding again
		out, err := Encode(bf)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if _, err := Decode("again.json", out); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		for _, tb := range bf.Testbeds {
			tb.Recompute()
		}
	})
}
