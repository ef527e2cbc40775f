package tensor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// JSONData returns the tensor's elements as a flat Go slice that encodes to
// KServe JSON tensor data: []bool, []int64, []uint64, []float32, []float64 or
// []string (BYTES). NaN and ±Inf are errors because JSON cannot carry them.
// Triton refuses FP16/BF16 in JSON; callers that mirror it check JSONAllowed.
// BYTES elements that are not valid UTF-8 come out with U+FFFD replacements,
// as with any JSON string; send such data in binary form.
func JSONData(t Tensor) (any, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	switch {
	case t.DataType == BOOL:
		out := make([]bool, len(t.Raw))
		for i, b := range t.Raw {
			out[i] = b != 0
		}
		return out, nil
	case t.DataType == BYTES:
		elems, err := BytesElements(t.Raw)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(elems))
		for i, e := range elems {
			out[i] = string(e)
		}
		return out, nil
	case t.DataType == UINT8 || t.DataType == UINT16 || t.DataType == UINT32 || t.DataType == UINT64:
		return ToUint64s(t.DataType, t.Raw)
	case t.DataType.IsInteger():
		return ToInt64s(t.DataType, t.Raw)
	case t.DataType == FP64:
		v, err := ToFloat64s(t.DataType, t.Raw)
		if err != nil {
			return nil, err
		}
		return v, checkFinite(t.Name, v)
	}
	v, err := ToFloat64s(t.DataType, t.Raw)
	if err != nil {
		return nil, err
	}
	if err := checkFinite(t.Name, v); err != nil {
		return nil, err
	}
	// float32 keeps the shortest decimal form ("0.1", not "0.10000000149011612").
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out, nil
}

func checkFinite(name string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("tensor %q: element %d is %v, which JSON cannot represent", name, i, x)
		}
	}
	return nil
}

// JSONAllowed reports whether Triton accepts the datatype as JSON tensor data.
func JSONAllowed(dt DataType) bool { return dt != FP16 && dt != BF16 }

// MarshalJSONData encodes the tensor's elements as a flat JSON array without
// going through reflection; the result equals json.Marshal(JSONData(t)).
func MarshalJSONData(t Tensor) (json.RawMessage, error) {
	if t.DataType == BYTES {
		v, err := JSONData(t)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	size := t.DataType.Size()
	n := len(t.Raw) / size
	buf := make([]byte, 0, 2+n*8)
	buf = append(buf, '[')
	le := binary.LittleEndian
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		switch t.DataType {
		case BOOL:
			buf = strconv.AppendBool(buf, t.Raw[i] != 0)
		case UINT64:
			buf = strconv.AppendUint(buf, le.Uint64(t.Raw[8*i:]), 10)
		case INT64:
			buf = strconv.AppendInt(buf, int64(le.Uint64(t.Raw[8*i:])), 10)
		case FP64:
			x := math.Float64frombits(le.Uint64(t.Raw[8*i:]))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("tensor %q: element %d is %v, which JSON cannot represent", t.Name, i, x)
			}
			buf = appendJSONFloat(buf, x, 64)
		case FP32, FP16, BF16:
			x := elemFloat(t.DataType, t.Raw, i)
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("tensor %q: element %d is %v, which JSON cannot represent", t.Name, i, x)
			}
			buf = appendJSONFloat(buf, x, 32)
		default:
			buf = strconv.AppendInt(buf, int64(elemFloat(t.DataType, t.Raw, i)), 10)
		}
	}
	return append(buf, ']'), nil
}

// appendJSONFloat formats like encoding/json does, so both encoders agree.
func appendJSONFloat(buf []byte, x float64, bits int) []byte {
	abs := math.Abs(x)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, x, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(buf)
		if n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// FromJSONData builds a tensor from KServe JSON tensor data, flat or nested
// (only the flattened row-major order and the element count are checked, as
// Triton does). BOOL takes true/false, BYTES takes strings, numeric types take
// numbers that fit the type exactly (integers) or approximately (floats).
func FromJSONData(name string, dt DataType, shape []int64, data json.RawMessage) (Tensor, error) {
	t := Tensor{Name: name, DataType: dt, Shape: shape}
	if !dt.Valid() {
		return t, fmt.Errorf("tensor %q: unknown datatype %q", name, dt)
	}
	want, err := ElementCount(shape)
	if err != nil {
		return t, fmt.Errorf("tensor %q: %w", name, err)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return t, fmt.Errorf("tensor %q: data is not valid JSON: %w", name, err)
	}
	if d.More() {
		return t, fmt.Errorf("tensor %q: data has trailing content after the JSON value", name)
	}
	if _, isList := tree.([]any); !isList {
		return t, fmt.Errorf("tensor %q: data must be a JSON array, got %s", name, JSONKind(tree))
	}
	var flat []any
	flat = flatten(flat, tree)
	if int64(len(flat)) != want {
		return t, fmt.Errorf("tensor %q: data has %d elements, shape %v needs %d", name, len(flat), shape, want)
	}
	t.Raw, err = encodeJSONElements(dt, flat)
	if err != nil {
		return t, fmt.Errorf("tensor %q: %w", name, err)
	}
	return t, nil
}

func flatten(dst []any, v any) []any {
	list, ok := v.([]any)
	if !ok {
		return append(dst, v)
	}
	for _, e := range list {
		dst = flatten(dst, e)
	}
	return dst
}

// JSONKind names the kind of a decoded JSON value (UseNumber) as error
// messages say it: "a number", "an array", "null".
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func encodeJSONElements(dt DataType, flat []any) ([]byte, error) {
	switch dt {
	case BYTES:
		var out []byte
		for i, e := range flat {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("element %d: BYTES data must be a string, got %s", i, JSONKind(e))
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
			out = append(out, s...)
		}
		if out == nil {
			out = []byte{}
		}
		return out, nil
	case BOOL:
		out := make([]byte, len(flat))
		for i, e := range flat {
			b, ok := e.(bool)
			if !ok {
				return nil, fmt.Errorf("element %d: BOOL data must be true or false, got %s", i, JSONKind(e))
			}
			if b {
				out[i] = 1
			}
		}
		return out, nil
	}
	out := make([]byte, dt.Size()*len(flat))
	for i, e := range flat {
		num, ok := e.(json.Number)
		if !ok {
			return nil, fmt.Errorf("element %d: %s data must be a number, got %s", i, dt, JSONKind(e))
		}
		if err := putJSONNumber(dt, out, i, string(num)); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return out, nil
}

func putJSONNumber(dt DataType, out []byte, i int, s string) error {
	le := binary.LittleEndian
	switch dt {
	case UINT8, UINT16, UINT32, UINT64:
		u, err := strconv.ParseUint(s, 10, dt.Size()*8)
		if err != nil {
			return fmt.Errorf("%s is not a valid %s value", s, dt)
		}
		switch dt.Size() {
		case 1:
			out[i] = uint8(u)
		case 2:
			le.PutUint16(out[2*i:], uint16(u))
		case 4:
			le.PutUint32(out[4*i:], uint32(u))
		default:
			le.PutUint64(out[8*i:], u)
		}
	case INT8, INT16, INT32, INT64:
		v, err := strconv.ParseInt(s, 10, dt.Size()*8)
		if err != nil {
			return fmt.Errorf("%s is not a valid %s value", s, dt)
		}
		switch dt.Size() {
		case 1:
			out[i] = uint8(int8(v))
		case 2:
			le.PutUint16(out[2*i:], uint16(int16(v)))
		case 4:
			le.PutUint32(out[4*i:], uint32(int32(v)))
		default:
			le.PutUint64(out[8*i:], uint64(v))
		}
	default:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s is out of %s range", s, dt)
		}
		if dt != FP64 && math.Abs(x) > math.MaxFloat32 {
			return fmt.Errorf("%s is out of %s range", s, dt)
		}
		if dt == FP16 && math.Abs(x) > 65504 {
			return fmt.Errorf("%s is out of FP16 range", s)
		}
		putFloat(dt, out, i, x)
	}
	return nil
}
