package torchserve

import (
	"strings"
	"testing"
)

func TestChecker(t *testing.T) {
	tests := []struct {
		name, want, got string
		json            bool
		tol             float64
		diff            string // "" = match
	}{
		{"equal", `{"output":[-2.218118,1.763946]}`, `{"output": [-2.218118, 1.763946]}`, true, 0, ""},
		{"number forms", `{"a":[1,2.5]}`, `{"a":[1.0,2.50]}`, true, 0, ""},
		{"exact differs", `{"output":[1.0]}`, `{"output":[1.000001]}`, true, 0, "$.output[0]: got 1.000001, want 1.0"},
		{"within tolerance", `{"output":[1.0]}`, `{"output":[1.000001]}`, true, 1e-5, ""},
		{"beyond tolerance", `{"output":[1.0]}`, `{"output":[1.1]}`, true, 1e-5, "$.output[0]: got 1.1, want 1.0 (tolerance 1e-05)"},
		{"relative tolerance", `[1e9]`, `[1.000001e9]`, true, 1e-5, ""},
		{"big integers exact", `[9007199254740993]`, `[9007199254740992]`, true, 0, "$[0]: got 9007199254740992, want 9007199254740993"},
		{"missing key", `{"a":1,"b":2}`, `{"a":1}`, true, 0, `$: key "b" missing`},
		{"extra key", `{"a":1}`, `{"a":1,"c":3}`, true, 0, `$: unexpected key "c"`},
		{"length", `[1,2]`, `[1]`, true, 0, "$: got 1 elements, want 2"},
		{"type", `{"a":[1]}`, `{"a":"1"}`, true, 0, "$.a: got a string, want an array"},
		{"string", `{"label":"cat"}`, `{"label":"dog"}`, true, 0, `$.label: got "dog", want "cat"`},
		{"not json", `{}`, `<html>`, true, 0, "reply is not JSON"},
		{"bytes equal", "\x00\x01", "\x00\x01", false, 0, ""},
		{"bytes differ", "abc", "abd", false, 0, "reply differs from the expected bytes: got 3 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newChecker(&expectation{json: tt.json, raw: []byte(tt.want)}, tt.tol)
			if err != nil {
				t.Fatal(err)
			}
			d := c.check([]byte(tt.got))
			if (tt.diff == "") != (d == "") || !strings.Contains(d, tt.diff) {
				t.Errorf("got %q, want %q", d, tt.diff)
			}
		})
	}
}

func FuzzChecker(f *testing.F) {
	f.Add([]byte(`{"output":[1,2]}`), []byte(`{"output":[1,2.0000001]}`), 1e-5)
	f.Fuzz(func(t *testing.T, want, got []byte, tol float64) {
		c, err := newChecker(&expectation{json: true, raw: want}, tol)
		if err != nil {
			return
		}
		if d := c.check(want); d != "" && tol >= 0 {
			// A value always matches itself, NaN-free JSON being exact.
			t.Errorf("%q does not match itself: %s", want, d)
		}
		_ = c.check(got)
	})
}
