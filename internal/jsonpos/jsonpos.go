// Package jsonpos turns the byte offset that encoding/json puts in its
// syntax and type errors into the line and column a user can open, so
// every JSON input (baselines, OpenAI payload files) names the same place
// the same way.
package jsonpos

import (
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
