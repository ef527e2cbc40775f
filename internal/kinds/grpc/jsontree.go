package grpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jnode is a JSON value with the byte span it came from, so errors about
// an input file can name its line and column. encoding/json tokenises;
// this only records where each value starts and ends.
type jnode struct {
	kind       byte // '{', '[', '"', '0' (number), 'b' (bool), 'n' (null)
	start, end int
	keys       []string
	keyAt      []int // offset of each key, for errors about the key itself
	vals       []*jnode
	elems      []*jnode
}

func (n *jnode) raw(src []byte) []byte { return src[n.start:n.end] }

// field is the member named key of an object, nil when absent.
func (n *jnode) field(key string) *jnode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// maxJSONDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxJSONDepth = 100

// posError is a fault at a byte offset of a file.
type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

// parseTree reads one JSON document, refusing trailing data and duplicate
// keys (protojson refuses them too, but without saying where).
func parseTree(src []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	n, err := parseValue(dec, src, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &posError{off: skipSpace(src, n.end), msg: "unexpected data after the top-level value"}
	}
	return n, nil
}

func parseValue(dec *json.Decoder, src []byte, depth int) (*jnode, error) {
	if depth > maxJSONDepth {
		return nil, &posError{off: int(dec.InputOffset()), msg: fmt.Sprintf("nesting deeper than %d levels", maxJSONDepth)}
	}
	start := skipSpace(src, int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxAt(err, start)
	}
	n := &jnode{start: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = '{'
			for dec.More() {
				keyAt := skipSpace(src, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxAt(err, keyAt)
				}
				key, _ := kt.(string)
				if n.field(key) != nil {
					return nil, &posError{off: keyAt, msg: fmt.Sprintf("key %q appears twice", key)}
				}
				v, err := parseValue(dec, src, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key)
				n.keyAt = append(n.keyAt, keyAt)
				n.vals = append(n.vals, v)
			}
		case '[':
			n.kind = '['
			for dec.More() {
				v, err := parseValue(dec, src, depth+1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
		default:
			return nil, &posError{off: start, msg: fmt.Sprintf("unexpected %q", t)}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, syntaxAt(err, int(dec.InputOffset()))
		}
	case string:
		n.kind = '"'
	case json.Number:
		n.kind = '0'
	case bool:
		n.kind = 'b'
	case nil:
		n.kind = 'n'
	}
	n.end = int(dec.InputOffset())
	return n, nil
}

// skipSpace moves past whitespace and the separators encoding/json
// consumes with a token, to where the next value starts.
func skipSpace(src []byte, off int) int {
	for off < len(src) {
		switch src[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func syntaxAt(err error, off int) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &posError{off: int(se.Offset), msg: se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &posError{off: off, msg: "unexpected end of file"}
	}
	return &posError{off: off, msg: err.Error()}
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(src []byte, off int) (int, int) {
	off = min(max(off, 0), len(src))
	line := 1 + bytes.Count(src[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return line, col
}
