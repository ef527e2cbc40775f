package kservev2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Parameters is a KServe "parameters" object. Values are string, bool or a
// number; decoding keeps numbers as json.Number so 64-bit ids survive.
type Parameters map[string]any

// Well-known parameter keys.
const (
	ParamBinaryDataSize   = "binary_data_size"
	ParamBinaryData       = "binary_data"
	ParamBinaryDataOutput = "binary_data_output"
	ParamShmRegion        = "shared_memory_region"
	ParamShmOffset        = "shared_memory_offset"
	ParamShmByteSize      = "shared_memory_byte_size"
	ParamSequenceID       = "sequence_id"
	ParamSequenceStart    = "sequence_start"
	ParamSequenceEnd      = "sequence_end"
	ParamPriority         = "priority"
	ParamTimeout          = "timeout"
	ParamClassification   = "classification"
)

// UnmarshalJSON decodes with UseNumber so integers keep full precision.
func (p *Parameters) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return err
	}
	*p = m
	return nil
}

// Int64 returns an integral parameter. ok is false when the key is absent;
// err is set when it is present but not an integer.
func (p Parameters) Int64(key string) (v int64, ok bool, err error) {
	raw, ok := p[key]
	if !ok {
		return 0, false, nil
	}
	v, err = AnyToInt64(raw)
	if err != nil {
		return 0, true, fmt.Errorf("parameter %q: %w", key, err)
	}
	return v, true, nil
}

// Bool returns a boolean parameter (ok false when absent).
func (p Parameters) Bool(key string) (v bool, ok bool, err error) {
	raw, ok := p[key]
	if !ok {
		return false, false, nil
	}
	b, isBool := raw.(bool)
	if !isBool {
		return false, true, fmt.Errorf("parameter %q: %v is not a boolean", key, raw)
	}
	return b, true, nil
}

// String returns a string parameter (ok false when absent).
func (p Parameters) String(key string) (v string, ok bool, err error) {
	raw, ok := p[key]
	if !ok {
		return "", false, nil
	}
	s, isString := raw.(string)
	if !isString {
		return "", true, fmt.Errorf("parameter %q: %v is not a string", key, raw)
	}
	return s, true, nil
}

// AnyToInt64 converts the numeric forms a parameter value can take
// (json.Number, Go integers, integral floats) to int64.
func AnyToInt64(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not a 64-bit integer", x)
		}
		return i, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d overflows int64", x)
		}
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, fmt.Errorf("%v is not a 64-bit integer", x)
		}
		return int64(x), nil
	}
	return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
}
