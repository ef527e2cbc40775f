package inputdata

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/tensor"
)

// sample is one batch-1 tensor read from the data, before batching.
type sample struct {
	shape []int64 // without batch dim, fully resolved
	raw   []byte
}

// decodeTensor reads one tensor value of a step: a flat (or nested) list,
// {"content": list | {"b64": s}, "shape": [...]}, or {"b64": s}.
func decodeTensor(l loc, v value, ts TensorSpec, src Source) (sample, error) {
	var (
		content   = v
		fileShape []int64
	)
	switch v.kind {
	case kArray:
	case kObject:
		for i, k := range v.c.keys {
			if k != "content" && k != "shape" && k != "b64" {
				at := v.c.keyAt[i]
				return sample{}, l.errf(&at, `unknown key %q in tensor (valid: "content", "shape", "b64")`, k)
			}
		}
		c, hasContent := v.field("content")
		_, hasB64 := v.field("b64")
		switch {
		case hasContent && hasB64:
			return sample{}, l.errf(&v, `tensor has both "content" and "b64"; give one`)
		case hasContent:
			content = c
		case !hasB64:
			return sample{}, l.errf(&v, `tensor object needs "content" or "b64"`)
		}
		if sv, ok := v.field("shape"); ok {
			s, err := readShape(l, sv, ts)
			if err != nil {
				return sample{}, err
			}
			fileShape = s
		}
	default:
		return sample{}, l.err(&v, `a list of values, {"content": ...} or {"b64": ...}`, article(v.kind))
	}

	shape := fileShape
	if shape == nil {
		shape = dimsFor(ts, src)
	}
	switch content.kind {
	case kArray:
		leaves := make([]value, 0, content.len())
		leaves, err := flatten(l, content, leaves, 0)
		if err != nil {
			return sample{}, err
		}
		shape, err := resolveShape(l, &content, ts, shape, int64(len(leaves)), fileShape != nil)
		if err != nil {
			return sample{}, err
		}
		raw, err := encodeLeaves(l, leaves, ts.DataType)
		if err != nil {
			return sample{}, err
		}
		return sample{shape: shape, raw: raw}, nil
	case kObject:
		b, ok := content.field("b64")
		if !ok || content.len() != 1 {
			return sample{}, l.errf(&content, `"content" object must be {"b64": "..."}`)
		}
		return decodeB64(l, b, ts, shape, fileShape != nil)
	default:
		return sample{}, l.err(&content, `"content" as a list of values or {"b64": ...}`, article(content.kind))
	}
}

// readShape parses a "shape" field, which excludes the batch dim and must
// fit the model dims.
func readShape(l loc, sv value, ts TensorSpec) ([]int64, error) {
	if sv.kind != kArray {
		return nil, l.err(&sv, `"shape" as a list of integers`, article(sv.kind))
	}
	shape := make([]int64, sv.len())
	for i := range shape {
		e := sv.elem(i)
		n, err := strconv.ParseInt(string(e.raw(l.src)), 10, 64)
		if e.kind != kNumber || err != nil || n < 0 {
			return nil, l.err(&e, `a non-negative integer in "shape"`, string(e.raw(l.src)))
		}
		shape[i] = n
	}
	if why := compatible(shape, ts.Dims); why != "" {
		return nil, l.errf(&sv, "shape %s %s", formatDims(shape), why)
	}
	return shape, nil
}

// resolveShape fills a single variable dim from the element count and checks
// the count against the shape.
func resolveShape(l loc, at *value, ts TensorSpec, shape []int64, count int64, fromFile bool) ([]int64, error) {
	variable := -1
	for i, d := range shape {
		if d < 0 {
			if variable >= 0 {
				return nil, l.errf(at, `dims %s have more than one variable dim; give "shape" in the data or a shape in the scenario`, formatDims(shape))
			}
			variable = i
		}
	}
	if variable >= 0 {
		rest := int64(1)
		for i, d := range shape {
			if i != variable {
				rest *= d
			}
		}
		if rest == 0 || count%rest != 0 {
			return nil, l.err(at, fmt.Sprintf("a multiple of %d %s elements (dims %s)", rest, ts.DataType, formatDims(shape)), fmt.Sprint(count))
		}
		shape = append([]int64(nil), shape...)
		shape[variable] = count / rest
		return shape, nil
	}
	want, err := tensor.ElementCount(shape)
	if err != nil {
		return nil, l.errf(at, "dims %s: %v", formatDims(shape), err)
	}
	if want != count {
		how := "dims"
		if fromFile {
			how = "shape"
		}
		return nil, l.err(at, fmt.Sprintf("%d %s elements (%s %s)", want, ts.DataType, how, formatDims(shape)), fmt.Sprint(count))
	}
	return shape, nil
}

// flatten collects the scalars of a possibly nested list in row-major order.
func flatten(l loc, v value, out []value, depth int) ([]value, error) {
	for i := 0; i < v.len(); i++ {
		e := v.elem(i)
		if e.kind == kArray {
			var err error
			if out, err = flatten(l, e, out, depth+1); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// encodeLeaves converts JSON scalars to the raw form of dt, naming the first
// element that does not fit.
func encodeLeaves(l loc, leaves []value, dt tensor.DataType) ([]byte, error) {
	bad := func(i int, want string) error {
		e := leaves[i]
		return l.err(&e, fmt.Sprintf("%s (element %d)", want, i), describe(l.src, e))
	}
	switch {
	case dt == tensor.BYTES:
		elems := make([][]byte, len(leaves))
		for i, e := range leaves {
			if e.kind != kString {
				return nil, bad(i, "a string for BYTES")
			}
			elems[i] = []byte(e.str(l.src))
		}
		return tensor.EncodeBytesElements(elems), nil
	case dt == tensor.BOOL:
		ints := make([]int64, len(leaves))
		for i, e := range leaves {
			if e.kind != kBool {
				return nil, bad(i, "true or false for BOOL")
			}
			if l.src[e.start] == 't' {
				ints[i] = 1
			}
		}
		return tensor.FromInt64s(dt, ints)
	case dt.IsFloat():
		fs := make([]float64, len(leaves))
		for i, e := range leaves {
			if e.kind != kNumber {
				return nil, bad(i, "a number for "+string(dt))
			}
			fs[i] = parseFloat(e.raw(l.src))
		}
		return tensor.FromFloat64s(dt, fs)
	default: // integers
		if dt == tensor.UINT64 {
			us := make([]uint64, len(leaves))
			for i, e := range leaves {
				u, err := strconv.ParseUint(string(e.raw(l.src)), 10, 64)
				if e.kind != kNumber || err != nil {
					return nil, bad(i, "an integer in UINT64 range")
				}
				us[i] = u
			}
			return tensor.FromUint64s(dt, us)
		}
		is := make([]int64, len(leaves))
		lo, hi := intBounds(dt)
		for i, e := range leaves {
			n, err := strconv.ParseInt(string(e.raw(l.src)), 10, 64)
			if e.kind != kNumber || err != nil || n < lo || n > hi {
				return nil, bad(i, fmt.Sprintf("an integer in %s range [%d, %d]", dt, lo, hi))
			}
			is[i] = n
		}
		return tensor.FromInt64s(dt, is)
	}
}

func intBounds(dt tensor.DataType) (lo, hi int64) {
	switch dt {
	case tensor.UINT8:
		return 0, math.MaxUint8
	case tensor.UINT16:
		return 0, math.MaxUint16
	case tensor.UINT32:
		return 0, math.MaxUint32
	case tensor.INT8:
		return math.MinInt8, math.MaxInt8
	case tensor.INT16:
		return math.MinInt16, math.MaxInt16
	case tensor.INT32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// parseFloat reads a number span the scanner validated, including the
// NaN/Infinity literals perf_analyzer accepts.
func parseFloat(raw []byte) float64 {
	switch string(raw) {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	// Out-of-range literals come back as ±Inf with an error; Inf is what a
	// float tensor would hold, so the error adds nothing.
	f, _ := strconv.ParseFloat(string(raw), 64)
	return f
}

func describe(src []byte, v value) string {
	switch v.kind {
	case kString, kNumber, kBool, kNull:
		s := string(v.raw(src))
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return s
	}
	return article(v.kind)
}

// decodeB64 handles {"b64": "..."}: raw little-endian bytes, and for BYTES the
// serialized form with 4-byte length prefixes (perf_analyzer's rule).
func decodeB64(l loc, b value, ts TensorSpec, shape []int64, fromFile bool) (sample, error) {
	if b.kind != kString {
		return sample{}, l.err(&b, `"b64" as a string`, article(b.kind))
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b.str(l.src)))
	if err != nil {
		return sample{}, l.errf(&b, "invalid base64: %v", err)
	}
	var count int64
	if ts.DataType == tensor.BYTES {
		n, err := tensor.CountBytesElements(raw)
		if err != nil {
			return sample{}, l.errf(&b, "b64 data is not serialized BYTES (4-byte length before each element): %v", err)
		}
		count = int64(n)
	} else {
		size := int64(ts.DataType.Size())
		if int64(len(raw))%size != 0 {
			return sample{}, l.err(&b, fmt.Sprintf("a multiple of %d bytes for %s", size, ts.DataType), fmt.Sprintf("%d bytes", len(raw)))
		}
		count = int64(len(raw)) / size
	}
	shape, err = resolveShape(l, &b, ts, shape, count, fromFile)
	if err != nil {
		if e, ok := err.(*Error); ok && ts.DataType != tensor.BYTES && e.Found != "" {
			e.Found += fmt.Sprintf(" (%d bytes)", len(raw))
		}
		return sample{}, err
	}
	return sample{shape: shape, raw: raw}, nil
}
