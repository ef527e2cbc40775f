package tfserving

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// dtypes pairs TensorFlow's element types with perfscen's. TensorFlow's
// others (complex, quantized, resource, variant, 8- and 4-bit floats) have
// no counterpart in the input-data and validation code, so a signature
// using one is refused by name before any load.
var dtypes = []struct {
	tf tfservingpb.DataType
	dt tensor.DataType
}{
	{tfservingpb.DataType_DT_BOOL, tensor.BOOL},
	{tfservingpb.DataType_DT_UINT8, tensor.UINT8},
	{tfservingpb.DataType_DT_UINT16, tensor.UINT16},
	{tfservingpb.DataType_DT_UINT32, tensor.UINT32},
	{tfservingpb.DataType_DT_UINT64, tensor.UINT64},
	{tfservingpb.DataType_DT_INT8, tensor.INT8},
	{tfservingpb.DataType_DT_INT16, tensor.INT16},
	{tfservingpb.DataType_DT_INT32, tensor.INT32},
	{tfservingpb.DataType_DT_INT64, tensor.INT64},
	{tfservingpb.DataType_DT_HALF, tensor.FP16},
	{tfservingpb.DataType_DT_BFLOAT16, tensor.BF16},
	{tfservingpb.DataType_DT_FLOAT, tensor.FP32},
	{tfservingpb.DataType_DT_DOUBLE, tensor.FP64},
	{tfservingpb.DataType_DT_STRING, tensor.BYTES},
}

// fromTF is the perfscen datatype of a TensorFlow one.
func fromTF(t tfservingpb.DataType) (tensor.DataType, error) {
	for _, p := range dtypes {
		if p.tf == t {
			return p.dt, nil
		}
	}
	return "", fmt.Errorf("TensorFlow dtype %s is not supported (supported: DT_BOOL, DT_INT8/16/32/64, DT_UINT8/16/32/64, DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_STRING)", t)
}

// toTF is the TensorFlow datatype of a perfscen one.
func toTF(dt tensor.DataType) (tfservingpb.DataType, error) {
	for _, p := range dtypes {
		if p.dt == dt {
			return p.tf, nil
		}
	}
	return tfservingpb.DataType_DT_INVALID, fmt.Errorf("datatype %q has no TensorFlow counterpart", dt)
}

// restDType reports whether TF Serving's REST API carries dt: its JSON
// tensors have no half-precision types (json_tensor.cc), so such inputs and
// outputs need gRPC.
func restDType(dt tensor.DataType) bool { return dt != tensor.FP16 && dt != tensor.BF16 }
