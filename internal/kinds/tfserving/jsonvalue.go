package tfserving

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfscen/perfscen/internal/tensor"
)

// TF Serving's REST API writes tensors as (nested) JSON lists, with two
// departures from plain JSON that this file handles: non-finite floats are
// the bare tokens NaN, Infinity and -Infinity (RapidJSON's kParseNanAndInf
// flags, which also read Inf and -Inf), and binary strings are objects
// {"b64": "<base64>"}, always for tensors whose names end in "_bytes".

// nonFinite maps the bare tokens to the quoted strings quoteNonFinite writes
// in their place.
var nonFinite = []struct {
	token string
	value float64
}{
	{"-Infinity", math.Inf(-1)},
	{"Infinity", math.Inf(1)},
	{"-Inf", math.Inf(-1)},
	{"Inf", math.Inf(1)},
	{"NaN", math.NaN()},
}

// quoteNonFinite rewrites the bare NaN/Infinity tokens outside strings into
// JSON strings ("NaN", "Infinity", "-Infinity"), so encoding/json reads the
// body; a float tensor then takes exactly these strings as its values. The
// input is returned as is when it holds no such token.
func quoteNonFinite(b []byte) []byte {
	var out []byte
	inString, escaped := false, false
	last := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			continue
		case 'N', 'I', '-':
		default:
			continue
		}
		for _, nf := range nonFinite {
			if !bytes.HasPrefix(b[i:], []byte(nf.token)) {
				continue
			}
			if end := i + len(nf.token); end < len(b) && isIdentByte(b[end]) {
				continue // a longer bare word: leave it for the JSON error
			}
			if out == nil {
				out = make([]byte, 0, len(b)+8)
			}
			out = append(out, b[last:i]...)
			out = append(out, '"')
			out = append(out, nf.token...)
			out = append(out, '"')
			i += len(nf.token) - 1
			last = i + 1
			break
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// decodeJSON reads one JSON value (numbers kept as json.Number) after
// quoting the non-finite tokens.
func decodeJSON(b []byte) (any, error) {
	q := quoteNonFinite(b)
	d := json.NewDecoder(bytes.NewReader(q))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(q[d.InputOffset():])) > 0 {
		return nil, errors.New("trailing content after the JSON value")
	}
	return v, nil
}

// isB64 reports whether v is a binary string object {"b64": "..."}.
func isB64(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	s, ok := m["b64"].(string)
	return s, ok
}

// isNamed reports whether v is an object of named tensors rather than a
// value (a binary string object is a value).
func isNamed(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if _, b64 := isB64(v); b64 {
		return nil, false
	}
	return m, true
}

// maxJSONElements bounds a decoded tensor, so a small body cannot make the
// decoder allocate without limit.
const maxJSONElements = 64 << 20

// valueTensor builds a tensor of dt from a JSON value: a scalar, or nested
// lists of equal lengths at each depth, whose nesting is the shape.
func valueTensor(name string, dt tensor.DataType, v any) (tensor.Tensor, error) {
	t := tensor.Tensor{Name: name, DataType: dt}
	var shape []int64
	for cur := v; ; {
		l, ok := cur.([]any)
		if !ok {
			break
		}
		shape = append(shape, int64(len(l)))
		if len(l) == 0 {
			break
		}
		cur = l[0]
	}
	t.Shape = shape
	flat := make([]any, 0, 16)
	var err error
	if flat, err = flattenShape(flat, v, shape, name); err != nil {
		return t, err
	}
	t.Raw, err = encodeElements(name, dt, flat)
	return t, err
}

// flattenShape appends v's leaves in row-major order, checking that every
// list at depth d has shape[d] entries and that leaves sit at the last
// depth only.
func flattenShape(dst []any, v any, shape []int64, name string) ([]any, error) {
	if len(shape) == 0 {
		if _, isList := v.([]any); isList {
			return nil, fmt.Errorf("tensor %q: lists nested unevenly (a value where a list is, or the reverse)", name)
		}
		if len(dst) >= maxJSONElements {
			return nil, fmt.Errorf("tensor %q: more than %d elements", name, maxJSONElements)
		}
		return append(dst, v), nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("tensor %q: lists nested unevenly (a value where a list is, or the reverse)", name)
	}
	if int64(len(l)) != shape[0] {
		return nil, fmt.Errorf("tensor %q: ragged lists (%d entries where the first list at that depth has %d)", name, len(l), shape[0])
	}
	var err error
	for _, x := range l {
		if dst, err = flattenShape(dst, x, shape[1:], name); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// stack joins tensors of one shape along a new first dimension: the rows
// of a row-format request or response.
func stack(name string, dt tensor.DataType, rows []any) (tensor.Tensor, error) {
	t, err := valueTensor(name, dt, rows)
	if err != nil {
		return t, err
	}
	if len(t.Shape) == 0 {
		t.Shape = []int64{0}
	}
	return t, nil
}

// encodeElements turns JSON leaves into a tensor's raw bytes.
func encodeElements(name string, dt tensor.DataType, flat []any) ([]byte, error) {
	if dt == tensor.BYTES {
		elems := make([][]byte, len(flat))
		for i, v := range flat {
			b, err := stringValue(v)
			if err != nil {
				return nil, fmt.Errorf("tensor %q element %d: %w", name, i, err)
			}
			elems[i] = b
		}
		return tensor.EncodeBytesElements(elems), nil
	}
	size := dt.Size()
	if size == 0 {
		return nil, fmt.Errorf("tensor %q: unknown datatype %q", name, dt)
	}
	out := make([]byte, len(flat)*size)
	for i, v := range flat {
		if err := putElement(dt, out[i*size:], v); err != nil {
			return nil, fmt.Errorf("tensor %q element %d: %w", name, i, err)
		}
	}
	return out, nil
}

func stringValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return []byte(x), nil
	case map[string]any:
		s, ok := isB64(x)
		if !ok {
			return nil, errors.New(`an object that is not {"b64": "..."}`)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("b64: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s where a string is expected", jsonKind(v))
}

// putElement writes one leaf as dt at out.
func putElement(dt tensor.DataType, out []byte, v any) error {
	le := binary.LittleEndian
	if dt == tensor.BOOL {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%s where true or false is expected", jsonKind(v))
		}
		out[0] = 0
		if b {
			out[0] = 1
		}
		return nil
	}
	if dt.IsFloat() {
		f, err := floatValue(v)
		if err != nil {
			return err
		}
		switch dt {
		case tensor.FP32:
			le.PutUint32(out, math.Float32bits(float32(f)))
		case tensor.FP64:
			le.PutUint64(out, math.Float64bits(f))
		case tensor.FP16:
			le.PutUint16(out, tensor.Float32ToFloat16(float32(f)))
		case tensor.BF16:
			le.PutUint16(out, tensor.Float32ToBFloat16(float32(f)))
		}
		return nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Errorf("%s where an integer is expected", jsonKind(v))
	}
	switch dt {
	case tensor.UINT8, tensor.UINT16, tensor.UINT32, tensor.UINT64:
		u, err := strconv.ParseUint(string(n), 10, dt.Size()*8)
		if err != nil {
			return fmt.Errorf("%s is not a %s", n, dt)
		}
		switch dt.Size() {
		case 1:
			out[0] = byte(u)
		case 2:
			le.PutUint16(out, uint16(u))
		case 4:
			le.PutUint32(out, uint32(u))
		default:
			le.PutUint64(out, u)
		}
	default:
		x, err := strconv.ParseInt(string(n), 10, dt.Size()*8)
		if err != nil {
			return fmt.Errorf("%s is not an %s", n, dt)
		}
		switch dt.Size() {
		case 1:
			out[0] = byte(int8(x))
		case 2:
			le.PutUint16(out, uint16(int16(x)))
		case 4:
			le.PutUint32(out, uint32(int32(x)))
		default:
			le.PutUint64(out, uint64(x))
		}
	}
	return nil
}

func floatValue(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%s is not a number", x)
		}
		return f, nil
	case string:
		for _, nf := range nonFinite {
			if x == nf.token {
				return nf.value, nil
			}
		}
	}
	return 0, fmt.Errorf("%s where a number is expected", jsonKind(v))
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(x)
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonTensor writes a tensor's values as TF Serving's REST API does.
type jsonTensor struct {
	t     tensor.Tensor
	elems [][]byte // BYTES elements
	b64   bool     // every string as {"b64": ...}: the name ends in _bytes
}

func newJSONTensor(t tensor.Tensor) (*jsonTensor, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	j := &jsonTensor{t: t, b64: strings.HasSuffix(t.Name, "_bytes")}
	if t.DataType == tensor.BYTES {
		var err error
		if j.elems, err = tensor.BytesElements(t.Raw); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// appendValue writes the sub-tensor of dims at element offset off: the
// whole tensor for dims = t.Shape, one row for dims = t.Shape[1:].
func (j *jsonTensor) appendValue(buf []byte, dims []int64, off int) []byte {
	if len(dims) == 0 {
		return j.appendElement(buf, off)
	}
	stride := 1
	for _, d := range dims[1:] {
		stride *= int(d)
	}
	buf = append(buf, '[')
	for i := range int(dims[0]) {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = j.appendValue(buf, dims[1:], off+i*stride)
	}
	return append(buf, ']')
}

func (j *jsonTensor) appendElement(buf []byte, i int) []byte {
	raw, le := j.t.Raw, binary.LittleEndian
	switch dt := j.t.DataType; dt {
	case tensor.BYTES:
		e := j.elems[i]
		if j.b64 || !utf8.Valid(e) {
			buf = append(buf, `{"b64":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, e)
			return append(buf, `"}`...)
		}
		q, _ := json.Marshal(string(e)) // a valid UTF-8 string always marshals
		return append(buf, q...)
	case tensor.BOOL:
		return strconv.AppendBool(buf, raw[i] != 0)
	case tensor.FP32:
		return appendFloat(buf, float64(math.Float32frombits(le.Uint32(raw[4*i:]))), 32)
	case tensor.FP64:
		return appendFloat(buf, math.Float64frombits(le.Uint64(raw[8*i:])), 64)
	case tensor.FP16:
		return appendFloat(buf, float64(tensor.Float16ToFloat32(le.Uint16(raw[2*i:]))), 32)
	case tensor.BF16:
		return appendFloat(buf, float64(tensor.BFloat16ToFloat32(le.Uint16(raw[2*i:]))), 32)
	case tensor.INT8:
		return strconv.AppendInt(buf, int64(int8(raw[i])), 10)
	case tensor.INT16:
		return strconv.AppendInt(buf, int64(int16(le.Uint16(raw[2*i:]))), 10)
	case tensor.INT32:
		return strconv.AppendInt(buf, int64(int32(le.Uint32(raw[4*i:]))), 10)
	case tensor.INT64:
		return strconv.AppendInt(buf, int64(le.Uint64(raw[8*i:])), 10)
	case tensor.UINT8:
		return strconv.AppendUint(buf, uint64(raw[i]), 10)
	case tensor.UINT16:
		return strconv.AppendUint(buf, uint64(le.Uint16(raw[2*i:])), 10)
	case tensor.UINT32:
		return strconv.AppendUint(buf, uint64(le.Uint32(raw[4*i:])), 10)
	case tensor.UINT64:
		return strconv.AppendUint(buf, le.Uint64(raw[8*i:]), 10)
	}
	return append(buf, "null"...)
}

// appendFloat writes the shortest decimal that reads back as the same
// float of that width; non-finite values as TF Serving's bare tokens.
func appendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bits)
}
