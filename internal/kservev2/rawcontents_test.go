package kservev2

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// RawToContents, the inverse of ContentsToRaw, builds the typed contents a
// client may send instead of raw_input_contents; perfscen always sends raw
// bytes, so only the round-trip tests use it.
// RawToContents converts raw data into typed InferTensorContents.
func RawToContents(dt tensor.DataType, raw []byte) (*inferencepb.InferTensorContents, error) {
	c := &inferencepb.InferTensorContents{}
	switch dt {
	case tensor.BOOL:
		c.BoolContents = make([]bool, len(raw))
		for i, b := range raw {
			c.BoolContents[i] = b != 0
		}
	case tensor.UINT8, tensor.UINT16, tensor.UINT32:
		v, err := tensor.ToUint64s(dt, raw)
		if err != nil {
			return nil, err
		}
		c.UintContents = make([]uint32, len(v))
		for i, x := range v {
			c.UintContents[i] = uint32(x)
		}
	case tensor.UINT64:
		v, err := tensor.ToUint64s(dt, raw)
		if err != nil {
			return nil, err
		}
		c.Uint64Contents = v
	case tensor.INT8, tensor.INT16, tensor.INT32:
		v, err := tensor.ToInt64s(dt, raw)
		if err != nil {
			return nil, err
		}
		c.IntContents = make([]int32, len(v))
		for i, x := range v {
			c.IntContents[i] = int32(x)
		}
	case tensor.INT64:
		v, err := tensor.ToInt64s(dt, raw)
		if err != nil {
			return nil, err
		}
		c.Int64Contents = v
	case tensor.FP32:
		v, err := tensor.DecodeFloat32s(raw)
		if err != nil {
			return nil, err
		}
		c.Fp32Contents = v
	case tensor.FP64:
		v, err := tensor.ToFloat64s(dt, raw)
		if err != nil {
			return nil, err
		}
		c.Fp64Contents = v
	case tensor.BYTES:
		elems, err := tensor.BytesElements(raw)
		if err != nil {
			return nil, err
		}
		c.BytesContents = elems
	default:
		return nil, fmt.Errorf("%s tensors have no typed contents field; send them raw", dt)
	}
	return c, nil
}
