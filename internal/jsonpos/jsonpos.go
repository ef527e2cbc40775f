// Package jsonpos turns the byte offset that encoding/json puts in its
// syntax and type errors into the line and column a user can open, so
// every JSON input (baselines, OpenAI payload files) names the same place
// the same way.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
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
