package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	var v struct{ N int }
	for _, tc := range []struct {
		name      string
		raw       string
		line, col int
		ok        bool
	}{
		{"syntax on line 3", "{\n  \"N\": 1,\n  ,\n}", 3, 4, true},
		{"type on line 2", "{\n \"N\": \"x\"}", 2, 10, true},
		{"first line", "{,}", 1, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := json.Unmarshal([]byte(tc.raw), &v)
			if err == nil {
				t.Fatal("no error")
			}
			line, col, ok := Of([]byte(tc.raw), err)
			if line != tc.line || col != tc.col || ok != tc.ok {
				t.Errorf("Of = %d:%d %v, want %d:%d %v (%v)", line, col, ok, tc.line, tc.col, tc.ok, err)
			}
		})
	}
	if _, _, ok := Of([]byte("{}"), errors.New("plain")); ok {
		t.Error("an error without an offset has a position")
	}
	if _, _, ok := Of([]byte("{}"), &json.SyntaxError{Offset: 99}); ok {
		t.Error("an offset past the input has a position")
	}
}

func TestFind(t *testing.T) {
	doc := "{\"data\": [\n  {\"payload\": [{\"a\": 1},\n     {\"b\": [2, 3]}]},\n  {\"x\": {\"payload\": 1}, \"payload\":\n[]}\n]}"
	for _, tc := range []struct {
		name      string
		path      []any
		line, col int
		ok        bool
	}{
		{"the document", nil, 1, 1, true},
		{"a key's value", []any{"data"}, 1, 10, true},
		{"first element", []any{"data", 0}, 2, 3, true},
		{"an element's key", []any{"data", 0, "payload"}, 2, 15, true},
		{"second element on its own line", []any{"data", 0, "payload", 1}, 3, 6, true},
		{"nested array element", []any{"data", 0, "payload", 1, "b", 1}, 3, 16, true},
		{"a key after a nested object of the same name", []any{"data", 1, "payload"}, 5, 1, true},
		{"index past the end", []any{"data", 2}, 0, 0, false},
		{"missing key", []any{"data", 0, "nope"}, 0, 0, false},
		{"index into an object", []any{0}, 0, 0, false},
		{"key into an array", []any{"data", "payload"}, 0, 0, false},
		{"negative index", []any{"data", -1}, 0, 0, false},
		{"a step of another type", []any{1.5}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, col, ok := Find([]byte(doc), tc.path...)
			if line != tc.line || col != tc.col || ok != tc.ok {
				t.Errorf("Find(%v) = %d:%d %v, want %d:%d %v", tc.path, line, col, ok, tc.line, tc.col, tc.ok)
			}
		})
	}
	if _, _, ok := Find([]byte(`{"data": [1, }`), "data", 2); ok {
		t.Error("a position past a syntax error")
	}
}

// Find reads input it did not decode itself: on any document and path it
// returns a position inside the document, at the start of a value, or
// none, and never panics.
func FuzzFind(f *testing.F) {
	f.Add([]byte(`{"data": [{"payload": [{"a": 1}, {"b": 2}]}]}`), "data", 0, "payload", 1)
	f.Add([]byte("{\"a\":\n[1,\n 2]}"), "a", 1, "", 0)
	f.Add([]byte(`[`), "", 3, "x", -1)
	f.Fuzz(func(t *testing.T, raw []byte, k1 string, i1 int, k2 string, i2 int) {
		line, col, ok := Find(raw, k1, i1, k2, i2)
		if !ok {
			return
		}
		lines := bytes.Split(raw, []byte("\n"))
		if line < 1 || line > len(lines) || col < 1 || col > len(lines[line-1]) {
			t.Fatalf("position %d:%d outside the document", line, col)
		}
		if c := lines[line-1][col-1]; bytes.IndexByte([]byte(" \t\r:,"), c) >= 0 {
			t.Fatalf("position %d:%d is at %q, not a value", line, col, c)
		}
	})
}

// Decoding errors are said in the document's terms: its path, a JSON
// kind, line and column; never a Go type or struct name.
func TestDescribe(t *testing.T) {
	type run struct {
		Points map[string]struct {
			Median float64 `json:"median"`
		} `json:"points"`
	}
	type file struct {
		Version  int `json:"format_version"`
		Testbeds map[string]struct {
			Runs []run `json:"runs"`
		} `json:"testbeds"`
	}
	for _, tt := range []struct{ doc, want string }{
		{`{"format_version": "2"}`, `line 1:23: format_version: expected a whole number, got a string`},
		{`{"testbeds": {"a": {"runs": "x"}}}`, `line 1:32: testbeds.a.runs: expected a list, got a string`},
		{"{\"testbeds\": {\"a\": {\"runs\": [{}, {\"points\": {\"p\": {\"throughput\": 1}}}]}}}", `line 1:52: testbeds.a.runs[1].points.p: unknown field "throughput"`},
	} {
		dec := json.NewDecoder(strings.NewReader(tt.doc))
		dec.DisallowUnknownFields()
		var f file
		err := dec.Decode(&f)
		if err == nil {
			t.Fatalf("%s decoded", tt.doc)
		}
		got := Describe([]byte(tt.doc), err, dec.InputOffset()).Error()
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.doc, got, tt.want)
		}
		if strings.Contains(got, "Go ") || strings.Contains(got, "struct") {
			t.Errorf("Go terms leak: %q", got)
		}
	}
}
