// Package jsonpos turns the byte offset that encoding/json puts in its
// syntax and type errors into the line and column a user can open, so
// every JSON input (baselines, OpenAI payload files) names the same place
// the same way.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Of returns the 1-based line and column of the offset carried by a
// *json.SyntaxError or *json.UnmarshalTypeError in err, counted in raw.
// ok is false when err carries no offset or the offset lies outside raw.
func Of(raw []byte, err error) (line, col int, ok bool) {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	return At(raw, off)
}

// At returns the 1-based line and column of byte offset off in raw; ok
// is false when off lies outside raw.
func At(raw []byte, off int64) (line, col int, ok bool) {
	if off < 0 || off > int64(len(raw)) {
		return 0, 0, false
	}
	line, col = 1, 1
	for _, b := range raw[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col, true
}

// Find returns the line and column where the value at path starts in
// the JSON document raw: path steps are object keys (string) and array
// indexes (int), so Find(raw, "data", 3, "payload", 0) is data[3].payload[0].
// It is meant for error paths: an input that decoded but holds a wrong
// value gets the position of that value, as a syntax error gets its own.
// ok is false when raw is not valid JSON up to the value or the path is
// not in it (the first of duplicate keys counts).
func Find(raw []byte, path ...any) (line, col int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	for _, step := range path {
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		switch step := step.(type) {
		case string:
			if tok != json.Delim('{') {
				return 0, 0, false
			}
			for {
				k, err := dec.Token()
				if err != nil {
					return 0, 0, false
				}
				if k == step {
					break
				}
				if _, isKey := k.(string); !isKey || skip(dec) != nil {
					return 0, 0, false
				}
			}
		case int:
			if tok != json.Delim('[') || step < 0 {
				return 0, 0, false
			}
			for range step {
				if !dec.More() || skip(dec) != nil {
					return 0, 0, false
				}
			}
			if !dec.More() {
				return 0, 0, false
			}
		default:
			return 0, 0, false
		}
	}
	// The decoder stands just past the key or the previous element: the
	// value starts after the whitespace and the one separator between.
	off := dec.InputOffset()
	for off < int64(len(raw)) && bytes.IndexByte([]byte(" \t\r\n:,"), raw[off]) >= 0 {
		off++
	}
	if off >= int64(len(raw)) {
		return 0, 0, false
	}
	return At(raw, off)
}

// skip consumes the next value.
func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// PathAt names the value that encloses byte offset off of the JSON
// document raw in the document's own terms ("testbeds.hw-1.runs[0]"):
// object keys joined by dots, array items by index. It reads raw up to off
// only, so it works for documents that fail to decode further on; "" when
// off lies at the top level or outside raw.
func PathAt(raw []byte, off int64) string {
	if off < 0 || off > int64(len(raw)) {
		return ""
	}
	type frame struct {
		array bool
		key   string
		index int
		open  bool // array: an item has started
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(raw[:off]))
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		top := len(stack) - 1
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if top >= 0 && stack[top].array {
				if stack[top].open {
					stack[top].index++
				}
				stack[top].open = true
			}
			stack = append(stack, frame{array: tok == json.Delim('[')})
			expectKey = tok == json.Delim('{')
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			expectKey = len(stack) > 0 && !stack[len(stack)-1].array
			continue
		}
		if top < 0 {
			continue
		}
		if stack[top].array {
			if stack[top].open {
				stack[top].index++
			}
			stack[top].open = true
			continue
		}
		if expectKey {
			stack[top].key, _ = tok.(string)
			expectKey = false
		} else {
			expectKey = true
		}
	}
	var b strings.Builder
	for _, f := range stack {
		if f.array {
			if f.open {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
			continue
		}
		if f.key == "" {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(f.key)
	}
	return b.String()
}

// Describe restates a decoding error in the terms of the document rather
// than of the Go types it decodes into: "line 3:14: testbeds.a.runs:
// expected a list, got a string" instead of "json: cannot unmarshal string
// into Go struct field Testbed.testbeds.runs of type []baseline.Run". off
// is where the decoder stood when it failed (for errors without an offset
// of their own, such as an unknown field); -1 when unknown.
func Describe(raw []byte, err error, off int64) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		where := PathAt(raw, te.Offset)
		msg := fmt.Sprintf("expected %s, got %s", jsonKind(te.Type), article(te.Value))
		return positioned(raw, te.Offset, where, msg)
	case errors.As(err, &se):
		return positioned(raw, se.Offset, "", "invalid JSON: "+se.Error())
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		// encoding/json gives no offset: the field is the first key of
		// that name (a decoder reads the whole value before it decodes).
		if k, err := strconv.Unquote(name); err == nil {
			if at := keyOffset(raw, k); at >= 0 {
				off = at
			}
		}
		return positioned(raw, off, PathAt(raw, off), "unknown field "+name)
	}
	return err
}

// keyOffset is the offset of the first object key k in raw, -1 if none.
func keyOffset(raw []byte, k string) int64 {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var stack []bool // true: object
	expectKey := false
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return -1
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, tok == json.Delim('{'))
			expectKey = tok == json.Delim('{')
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			expectKey = len(stack) > 0 && stack[len(stack)-1]
			continue
		}
		if len(stack) == 0 || !stack[len(stack)-1] {
			continue
		}
		if expectKey && tok == k {
			// before stands at the separator before the key.
			for before < int64(len(raw)) && raw[before] != '"' {
				before++
			}
			return before
		}
		expectKey = !expectKey
	}
}

func positioned(raw []byte, off int64, where, msg string) error {
	if where != "" {
		msg = where + ": " + msg
	}
	if line, col, ok := At(raw, off); ok {
		return fmt.Errorf("line %d:%d: %s", line, col, msg)
	}
	return errors.New(msg)
}

// jsonKind names what a Go type holds in JSON words.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another value"
}

// article names a JSON value kind as encoding/json reports it ("string",
// "number 1.5", "array", "object", "bool").
func article(v string) string {
	switch {
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number"):
		return v
	}
	return "a " + v
}
