package inputdata

import (
	"encoding/json"
	"fmt"
)

// kind is the JSON type of a value in the position-aware tree.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// value is one JSON value with the byte span it came from. Scalars stay as
// spans of the source so a large numeric array costs 24 bytes per element and
// is decoded only once its datatype is known.
type value struct {
	kind       kind
	start, end int
	c          *composite
}

type composite struct {
	elems  []value  // array elements
	keys   []string // object keys, in file order
	keyAt  []value  // the key strings themselves, for errors about a key
	fields []value  // object values, parallel to keys
}

func (v value) raw(src []byte) []byte { return src[v.start:v.end] }

func (v value) len() int {
	if v.c == nil {
		return 0
	}
	if v.kind == kObject {
		return len(v.c.keys)
	}
	return len(v.c.elems)
}

func (v value) elem(i int) value { return v.c.elems[i] }

// field returns the member named key of an object.
func (v value) field(key string) (value, bool) {
	if v.kind != kObject || v.c == nil {
		return value{}, false
	}
	for i, k := range v.c.keys {
		if k == key {
			return v.c.fields[i], true
		}
	}
	return value{}, false
}

// str decodes a string value.
func (v value) str(src []byte) string {
	raw := v.raw(src)
	if !needsUnquote(raw) {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	// The span was validated by the scanner, so this cannot fail.
	_ = json.Unmarshal(raw, &s)
	return s
}

// needsUnquote is false for strings without escapes, whose bytes are taken
// as they are: BYTES data need not be valid UTF-8, and perf_analyzer sends
// such bytes unchanged.
func needsUnquote(raw []byte) bool {
	for _, b := range raw[1 : len(raw)-1] {
		if b == '\\' {
			return true
		}
	}
	return false
}

// syntaxError is a parse failure at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

type parser struct {
	src []byte
	pos int
}

// parseJSON parses one JSON document, rejecting trailing content and
// duplicate object keys (perf_analyzer would silently use the first).
func parseJSON(src []byte) (value, error) {
	p := &parser{src: src}
	v, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	p.space()
	if p.pos != len(src) {
		return value{}, p.fail("unexpected %s after the top-level value", p.describe())
	}
	return v, nil
}

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{off: p.pos, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	c := p.src[p.pos]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return fmt.Sprintf("character %q", c)
}

func (p *parser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (value, error) {
	p.space()
	if depth > maxDepth {
		return value{}, p.fail("nesting deeper than %d levels", maxDepth)
	}
	if p.pos >= len(p.src) {
		return value{}, p.fail("unexpected end of file, expected a value")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		if err := p.string(); err != nil {
			return value{}, err
		}
		return value{kind: kString, start: start, end: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if err := p.number(); err != nil {
			return value{}, err
		}
		return value{kind: kNumber, start: start, end: p.pos}, nil
	case p.literal("true"), p.literal("false"):
		return value{kind: kBool, start: start, end: p.pos}, nil
	case p.literal("null"):
		return value{kind: kNull, start: start, end: p.pos}, nil
	case p.literal("NaN"), p.literal("Infinity"):
		// perf_analyzer parses with RapidJSON's NaN/Inf extension, so
		// validation data may carry these literals.
		return value{kind: kNumber, start: start, end: p.pos}, nil
	default:
		return value{}, p.fail("unexpected %s, expected a value", p.describe())
	}
}

func (p *parser) literal(word string) bool {
	if len(p.src)-p.pos >= len(word) && string(p.src[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (value, error) {
	v := value{kind: kObject, start: p.pos, c: &composite{}}
	p.pos++ // {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return value{}, p.fail("unexpected %s, expected a string key", p.describe())
		}
		keyStart := p.pos
		if err := p.string(); err != nil {
			return value{}, err
		}
		key := value{kind: kString, start: keyStart, end: p.pos}.str(p.src)
		for _, k := range v.c.keys {
			if k == key {
				p.pos = keyStart
				return value{}, p.fail("duplicate key %q", key)
			}
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return value{}, p.fail("unexpected %s, expected ':'", p.describe())
		}
		p.pos++
		field, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.c.keys = append(v.c.keys, key)
		v.c.keyAt = append(v.c.keyAt, value{kind: kString, start: keyStart, end: keyStart + 1})
		v.c.fields = append(v.c.fields, field)
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		return value{}, p.fail("unexpected %s, expected ',' or '}'", p.describe())
	}
}

func (p *parser) array(depth int) (value, error) {
	v := value{kind: kArray, start: p.pos, c: &composite{}}
	p.pos++ // [
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		v.end = p.pos
		return v, nil
	}
	for {
		e, err := p.value(depth + 1)
		if err != nil {
			return value{}, err
		}
		v.c.elems = append(v.c.elems, e)
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			v.end = p.pos
			return v, nil
		}
		return value{}, p.fail("unexpected %s, expected ',' or ']'", p.describe())
	}
}

func (p *parser) string() error {
	p.pos++ // opening quote
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c == '\\':
			p.pos++
			if p.pos >= len(p.src) {
				return p.fail("unexpected end of file in string")
			}
			switch p.src[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos++
			case 'u':
				p.pos++
				for i := 0; i < 4; i++ {
					if p.pos >= len(p.src) || !isHex(p.src[p.pos]) {
						return p.fail("invalid \\u escape in string")
					}
					p.pos++
				}
			default:
				return p.fail("invalid escape %s in string", p.describe())
			}
		case c < 0x20:
			return p.fail("control character 0x%02x in string", c)
		default:
			p.pos++
		}
	}
	return p.fail("unexpected end of file in string")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *parser) number() error {
	if p.src[p.pos] == '-' {
		p.pos++
		if p.literal("Infinity") {
			return nil
		}
	}
	if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
		return p.fail("invalid number: expected a digit, found %s", p.describe())
	}
	if p.src[p.pos] == '0' {
		p.pos++
	} else {
		p.digits()
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
			return p.fail("invalid number: expected a digit after '.', found %s", p.describe())
		}
		p.digits()
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(p.src) || !isDigit(p.src[p.pos]) {
			return p.fail("invalid number: expected an exponent digit, found %s", p.describe())
		}
		p.digits()
	}
	return nil
}

func (p *parser) digits() {
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lineCol turns a byte offset into 1-based line and column (columns count
// bytes, as compilers do).
func lineCol(src []byte, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	line, col = 1, 1
	for _, b := range src[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
