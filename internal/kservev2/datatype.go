package kservev2

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// protoTypes are Triton's model-config enum values of the datatypes.
var protoTypes = map[tensor.DataType]inferencepb.DataType{
	tensor.BOOL:   inferencepb.DataType_TYPE_BOOL,
	tensor.UINT8:  inferencepb.DataType_TYPE_UINT8,
	tensor.UINT16: inferencepb.DataType_TYPE_UINT16,
	tensor.UINT32: inferencepb.DataType_TYPE_UINT32,
	tensor.UINT64: inferencepb.DataType_TYPE_UINT64,
	tensor.INT8:   inferencepb.DataType_TYPE_INT8,
	tensor.INT16:  inferencepb.DataType_TYPE_INT16,
	tensor.INT32:  inferencepb.DataType_TYPE_INT32,
	tensor.INT64:  inferencepb.DataType_TYPE_INT64,
	tensor.FP16:   inferencepb.DataType_TYPE_FP16,
	tensor.BF16:   inferencepb.DataType_TYPE_BF16,
	tensor.FP32:   inferencepb.DataType_TYPE_FP32,
	tensor.FP64:   inferencepb.DataType_TYPE_FP64,
	// Triton's config calls variable-length bytes TYPE_STRING.
	tensor.BYTES: inferencepb.DataType_TYPE_STRING,
}

// DataTypeProto is the Triton model-config enum value of dt; TYPE_INVALID
// if dt is unknown.
func DataTypeProto(dt tensor.DataType) inferencepb.DataType { return protoTypes[dt] }

// DataTypeFromProto maps a model-config enum value to a datatype.
func DataTypeFromProto(p inferencepb.DataType) (tensor.DataType, error) {
	for dt, v := range protoTypes {
		if v == p {
			return dt, nil
		}
	}
	return "", fmt.Errorf("unsupported model-config data_type %s", p)
}
