package kservev2

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// ParamToProto converts a parameter value to its gRPC form. Integral numbers
// become int64_param (uint64_param beyond MaxInt64), as Triton expects for
// sequence_id, priority and timeout.
func ParamToProto(v any) (*inferencepb.InferParameter, error) {
	p := &inferencepb.InferParameter{}
	switch x := v.(type) {
	case bool:
		p.ParameterChoice = &inferencepb.InferParameter_BoolParam{BoolParam: x}
	case string:
		p.ParameterChoice = &inferencepb.InferParameter_StringParam{StringParam: x}
	case uint64:
		if x > math.MaxInt64 {
			p.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: x}
			return p, nil
		}
		p.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(x)}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			p.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: i}
		} else if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			p.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: u}
		} else if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			p.ParameterChoice = &inferencepb.InferParameter_DoubleParam{DoubleParam: f}
		} else {
			return nil, fmt.Errorf("parameter value %s is not a number", x)
		}
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			p.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(x)}
		} else {
			p.ParameterChoice = &inferencepb.InferParameter_DoubleParam{DoubleParam: x}
		}
	case float32:
		return ParamToProto(float64(x))
	default:
		i, err := AnyToInt64(v)
		if err != nil {
			return nil, fmt.Errorf("parameter value %v (%T) has no gRPC form", v, v)
		}
		p.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: i}
	}
	return p, nil
}

// ParamFromProto returns the Go value of a gRPC parameter: bool, int64,
// string, float64 or uint64; nil when unset.
func ParamFromProto(p *inferencepb.InferParameter) any {
	switch x := p.GetParameterChoice().(type) {
	case *inferencepb.InferParameter_BoolParam:
		return x.BoolParam
	case *inferencepb.InferParameter_Int64Param:
		return x.Int64Param
	case *inferencepb.InferParameter_StringParam:
		return x.StringParam
	case *inferencepb.InferParameter_DoubleParam:
		return x.DoubleParam
	case *inferencepb.InferParameter_Uint64Param:
		return x.Uint64Param
	}
	return nil
}

// ParamsToProto converts a parameter map; nil in, nil out.
func ParamsToProto(ps Parameters) (map[string]*inferencepb.InferParameter, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make(map[string]*inferencepb.InferParameter, len(ps))
	for k, v := range ps {
		p, err := ParamToProto(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

// ParamsFromProto converts a gRPC parameter map; nil in, nil out.
func ParamsFromProto(ps map[string]*inferencepb.InferParameter) Parameters {
	if len(ps) == 0 {
		return nil
	}
	out := make(Parameters, len(ps))
	for k, v := range ps {
		out[k] = ParamFromProto(v)
	}
	return out
}

// ContentsToRaw converts typed InferTensorContents into the raw form. The
// field used must match the datatype (protocol.md §1.5); FP16/BF16 have none.
func ContentsToRaw(dt tensor.DataType, c *inferencepb.InferTensorContents) ([]byte, error) {
	switch dt {
	case tensor.BOOL:
		out := make([]byte, len(c.GetBoolContents()))
		for i, b := range c.GetBoolContents() {
			if b {
				out[i] = 1
			}
		}
		return out, nil
	case tensor.UINT8, tensor.UINT16, tensor.UINT32:
		v := make([]uint64, len(c.GetUintContents()))
		for i, x := range c.GetUintContents() {
			v[i] = uint64(x)
		}
		return tensor.FromUint64s(dt, v)
	case tensor.UINT64:
		return tensor.FromUint64s(dt, c.GetUint64Contents())
	case tensor.INT8, tensor.INT16, tensor.INT32:
		v := make([]int64, len(c.GetIntContents()))
		for i, x := range c.GetIntContents() {
			v[i] = int64(x)
		}
		return tensor.FromInt64s(dt, v)
	case tensor.INT64:
		return tensor.EncodeInt64s(c.GetInt64Contents()), nil
	case tensor.FP32:
		return tensor.EncodeFloat32s(c.GetFp32Contents()), nil
	case tensor.FP64:
		return tensor.EncodeFloat64s(c.GetFp64Contents()), nil
	case tensor.BYTES:
		return tensor.AppendBytesElements(make([]byte, 0), c.GetBytesContents()), nil
	case tensor.FP16, tensor.BF16:
		return nil, fmt.Errorf("%s tensors have no typed contents field; send them raw", dt)
	}
	return nil, fmt.Errorf("unknown datatype %q", dt)
}
