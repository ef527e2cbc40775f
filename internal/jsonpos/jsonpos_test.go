package jsonpos

import (
	"encoding/json"
	"errors"
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
