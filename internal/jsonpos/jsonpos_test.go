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
