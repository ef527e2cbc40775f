package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeInt32s packs values little-endian.
func EncodeInt32s(v []int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// DecodeInt32s unpacks little-endian int32 values.
func DecodeInt32s(raw []byte) ([]int32, error) {
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("INT32 data of %d bytes is not a multiple of 4", len(raw))
	}
	out := make([]int32, len(raw)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// EncodeFloat32s packs values little-endian.
func EncodeFloat32s(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// DecodeFloat32s unpacks little-endian float32 values.
func DecodeFloat32s(raw []byte) ([]float32, error) {
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("FP32 data of %d bytes is not a multiple of 4", len(raw))
	}
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out, nil
}

// EncodeInt64s packs values little-endian.
func EncodeInt64s(v []int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

// EncodeFloat64s packs values little-endian.
func EncodeFloat64s(v []float64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
	return out
}

func checkFixed(dt DataType, raw []byte) (int, error) {
	size := dt.Size()
	if size == 0 {
		return 0, fmt.Errorf("datatype %q has no fixed element size", dt)
	}
	if len(raw)%size != 0 {
		return 0, fmt.Errorf("%s data of %d bytes is not a multiple of %d", dt, len(raw), size)
	}
	return len(raw) / size, nil
}

// elem reads element i of a fixed-size tensor as float64 (exact for all but
// 64-bit integers beyond 2^53).
func elemFloat(dt DataType, raw []byte, i int) float64 {
	le := binary.LittleEndian
	switch dt {
	case BOOL:
		if raw[i] != 0 {
			return 1
		}
		return 0
	case UINT8:
		return float64(raw[i])
	case INT8:
		return float64(int8(raw[i]))
	case UINT16:
		return float64(le.Uint16(raw[2*i:]))
	case INT16:
		return float64(int16(le.Uint16(raw[2*i:])))
	case UINT32:
		return float64(le.Uint32(raw[4*i:]))
	case INT32:
		return float64(int32(le.Uint32(raw[4*i:])))
	case UINT64:
		return float64(le.Uint64(raw[8*i:]))
	case INT64:
		return float64(int64(le.Uint64(raw[8*i:])))
	case FP16:
		return float64(Float16ToFloat32(le.Uint16(raw[2*i:])))
	case BF16:
		return float64(BFloat16ToFloat32(le.Uint16(raw[2*i:])))
	case FP32:
		return float64(math.Float32frombits(le.Uint32(raw[4*i:])))
	case FP64:
		return math.Float64frombits(le.Uint64(raw[8*i:]))
	}
	panic("kserve: elemFloat on " + string(dt))
}

// ToFloat64s decodes any fixed-size tensor into float64 values (BOOL as 0/1).
// 64-bit integers beyond ±2^53 lose precision; use ToInt64s for those.
func ToFloat64s(dt DataType, raw []byte) ([]float64, error) {
	n, err := checkFixed(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = elemFloat(dt, raw, i)
	}
	return out, nil
}

// ToInt64s decodes a BOOL or integer tensor exactly. UINT64 values above
// MaxInt64 are an error rather than a silent wrap.
func ToInt64s(dt DataType, raw []byte) ([]int64, error) {
	if dt != BOOL && !dt.IsInteger() {
		return nil, fmt.Errorf("%s is not an integer datatype", dt)
	}
	n, err := checkFixed(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		switch dt {
		case UINT64:
			u := binary.LittleEndian.Uint64(raw[8*i:])
			if u > math.MaxInt64 {
				return nil, fmt.Errorf("element %d: UINT64 value %d does not fit int64", i, u)
			}
			out[i] = int64(u)
		case INT64:
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		default:
			out[i] = int64(elemFloat(dt, raw, i))
		}
	}
	return out, nil
}

// ToUint64s decodes an unsigned integer or BOOL tensor exactly.
func ToUint64s(dt DataType, raw []byte) ([]uint64, error) {
	switch dt {
	case BOOL, UINT8, UINT16, UINT32:
	case UINT64:
		n, err := checkFixed(dt, raw)
		if err != nil {
			return nil, err
		}
		out := make([]uint64, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(raw[8*i:])
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s is not an unsigned datatype", dt)
	}
	n, err := checkFixed(dt, raw)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(elemFloat(dt, raw, i))
	}
	return out, nil
}

// intRange is the closed range of values a datatype holds.
func intRange(dt DataType) (lo, hi float64) {
	switch dt {
	case BOOL:
		return 0, 1
	case UINT8:
		return 0, math.MaxUint8
	case UINT16:
		return 0, math.MaxUint16
	case UINT32:
		return 0, math.MaxUint32
	case UINT64:
		return 0, math.MaxUint64
	case INT8:
		return math.MinInt8, math.MaxInt8
	case INT16:
		return math.MinInt16, math.MaxInt16
	case INT32:
		return math.MinInt32, math.MaxInt32
	case INT64:
		return math.MinInt64, math.MaxInt64
	}
	return math.Inf(-1), math.Inf(1)
}

// FromFloat64s encodes float64 values as a fixed-size tensor. Values bound for
// BOOL or integer types must be integral and in range (BOOL: 0 or 1); float
// types round to the nearest representable value.
func FromFloat64s(dt DataType, v []float64) ([]byte, error) {
	size := dt.Size()
	if size == 0 {
		return nil, fmt.Errorf("datatype %q has no fixed element size", dt)
	}
	out := make([]byte, size*len(v))
	lo, hi := intRange(dt)
	for i, x := range v {
		if dt == BOOL || dt.IsInteger() {
			// hi for 64-bit types rounds up to 2^63 / 2^64, which is out of range.
			if x != math.Trunc(x) || x < lo || x > hi || (dt == INT64 && x >= 1<<63) || (dt == UINT64 && x >= 1<<64) {
				return nil, fmt.Errorf("element %d: %v is not a valid %s value", i, x, dt)
			}
		}
		putFloat(dt, out, i, x)
	}
	return out, nil
}

func putFloat(dt DataType, out []byte, i int, x float64) {
	le := binary.LittleEndian
	switch dt {
	case BOOL, UINT8:
		out[i] = uint8(x)
	case INT8:
		out[i] = uint8(int8(x))
	case UINT16:
		le.PutUint16(out[2*i:], uint16(x))
	case INT16:
		le.PutUint16(out[2*i:], uint16(int16(x)))
	case UINT32:
		le.PutUint32(out[4*i:], uint32(x))
	case INT32:
		le.PutUint32(out[4*i:], uint32(int32(x)))
	case UINT64:
		le.PutUint64(out[8*i:], uint64(x))
	case INT64:
		le.PutUint64(out[8*i:], uint64(int64(x)))
	case FP16:
		le.PutUint16(out[2*i:], Float32ToFloat16(float32(x)))
	case BF16:
		le.PutUint16(out[2*i:], Float32ToBFloat16(float32(x)))
	case FP32:
		le.PutUint32(out[4*i:], math.Float32bits(float32(x)))
	case FP64:
		le.PutUint64(out[8*i:], math.Float64bits(x))
	}
}

// FromInt64s encodes integers as a fixed-size tensor with range checks
// (BOOL: 0 or 1). Float types take the nearest representable value.
func FromInt64s(dt DataType, v []int64) ([]byte, error) {
	size := dt.Size()
	if size == 0 {
		return nil, fmt.Errorf("datatype %q has no fixed element size", dt)
	}
	out := make([]byte, size*len(v))
	lo, hi := intRange(dt)
	for i, x := range v {
		switch dt {
		case INT64:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
			continue
		case UINT64:
			if x < 0 {
				return nil, fmt.Errorf("element %d: %d is not a valid UINT64 value", i, x)
			}
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
			continue
		}
		if (dt == BOOL || dt.IsInteger()) && (float64(x) < lo || float64(x) > hi) {
			return nil, fmt.Errorf("element %d: %d is not a valid %s value", i, x, dt)
		}
		putFloat(dt, out, i, float64(x))
	}
	return out, nil
}

// FromUint64s encodes unsigned integers with range checks.
func FromUint64s(dt DataType, v []uint64) ([]byte, error) {
	if dt == UINT64 {
		out := make([]byte, 8*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], x)
		}
		return out, nil
	}
	iv := make([]int64, len(v))
	for i, x := range v {
		if x > math.MaxInt64 {
			return nil, fmt.Errorf("element %d: %d is not a valid %s value", i, x, dt)
		}
		iv[i] = int64(x)
	}
	return FromInt64s(dt, iv)
}
