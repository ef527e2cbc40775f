package tfservingpb

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Wire compatibility with TensorFlow Serving rests on these names, numbers
// and encodings: the table pins every field of every message we declare
// (name, number, type, cardinality, packing), so a typo, a renumbering or
// a field added without a look at upstream fails here rather than against
// a real server. The numbers are upstream's (tensorflow_serving/apis/*.proto
// and tensorflow/core/framework/*.proto).
func TestFieldNumbers(t *testing.T) {
	want := map[string][]string{
		"tensorflow.serving.ModelSpec": {
			"name=1 string", "version=2 message", "signature_name=3 string", "version_label=4 string",
		},
		"tensorflow.serving.PredictRequest": {
			"model_spec=1 message", "inputs=2 map", "output_filter=3 repeated string",
		},
		"tensorflow.serving.PredictResponse": {"outputs=1 map", "model_spec=2 message"},
		"tensorflow.serving.GetModelMetadataRequest": {
			"model_spec=1 message", "metadata_field=2 repeated string",
		},
		"tensorflow.serving.GetModelMetadataResponse": {"model_spec=1 message", "metadata=2 map"},
		"tensorflow.serving.SignatureDefMap":          {"signature_def=1 map"},
		"tensorflow.serving.GetModelStatusRequest":    {"model_spec=1 message"},
		"tensorflow.serving.ModelVersionStatus":       {"version=1 int64", "state=2 enum", "status=3 message"},
		"tensorflow.serving.GetModelStatusResponse":   {"model_version_status=1 repeated message"},
		"tensorflow.serving.StatusProto":              {"error_code=1 enum", "error_message=2 string"},
		"tensorflow.TensorProto": {
			"dtype=1 enum", "tensor_shape=2 message", "version_number=3 int32", "tensor_content=4 bytes",
			"float_val=5 packed float", "double_val=6 packed double", "int_val=7 packed int32",
			"string_val=8 repeated bytes", "scomplex_val=9 packed float", "int64_val=10 packed int64",
			"bool_val=11 packed bool", "dcomplex_val=12 packed double", "half_val=13 packed int32",
			"resource_handle_val=14 repeated message", "variant_val=15 repeated message",
			"uint32_val=16 packed uint32", "uint64_val=17 packed uint64", "float8_val=18 bytes",
		},
		"tensorflow.VariantTensorDataProto": {"type_name=1 string", "metadata=2 bytes", "tensors=3 repeated message"},
		"tensorflow.TensorShapeProto":       {"dim=2 repeated message", "unknown_rank=3 bool"},
		"tensorflow.TensorShapeProto.Dim":   {"size=1 int64", "name=2 string"},
		"tensorflow.ResourceHandleProto": {
			"device=1 string", "container=2 string", "name=3 string", "hash_code=4 uint64",
			"maybe_type_name=5 string", "dtypes_and_shapes=6 repeated message",
		},
		"tensorflow.ResourceHandleProto.DtypeAndShape": {"dtype=1 enum", "shape=2 message"},
		"tensorflow.TensorInfo": {
			"name=1 string", "dtype=2 enum", "tensor_shape=3 message", "coo_sparse=4 message",
		},
		"tensorflow.TensorInfo.CooSparse": {
			"values_tensor_name=1 string", "indices_tensor_name=2 string", "dense_shape_tensor_name=3 string",
		},
		"tensorflow.SignatureDef": {
			"inputs=1 map", "outputs=2 map", "method_name=3 string", "defaults=4 map",
		},
	}
	for name, fields := range want {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			t.Errorf("message %s: %v", name, err)
			continue
		}
		md := d.(protoreflect.MessageDescriptor)
		var got []string
		for i := range md.Fields().Len() {
			got = append(got, describe(md.Fields().Get(i)))
		}
		slices.Sort(got)
		fields = slices.Clone(fields)
		slices.Sort(fields)
		if !slices.Equal(got, fields) {
			t.Errorf("%s fields:\n got %s\nwant %s", name, strings.Join(got, ", "), strings.Join(fields, ", "))
		}
	}
	// The oneofs decide which field a decoder keeps when both arrive.
	for _, o := range []struct{ msg, oneof, fields string }{
		{"tensorflow.serving.ModelSpec", "version_choice", "version,version_label"},
		{"tensorflow.TensorInfo", "encoding", "name,coo_sparse"},
	} {
		d, _ := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(o.msg))
		od := d.(protoreflect.MessageDescriptor).Oneofs().ByName(protoreflect.Name(o.oneof))
		if od == nil {
			t.Errorf("%s has no oneof %s", o.msg, o.oneof)
			continue
		}
		var names []string
		for i := range od.Fields().Len() {
			names = append(names, string(od.Fields().Get(i).Name()))
		}
		if got := strings.Join(names, ","); got != o.fields {
			t.Errorf("%s oneof %s = %s, want %s", o.msg, o.oneof, got, o.fields)
		}
	}
	// Upstream's reserved numbers stay reserved, so nobody reuses them.
	for _, r := range []struct {
		msg string
		n   protoreflect.FieldNumber
	}{{"tensorflow.serving.PredictRequest", 4}, {"tensorflow.ResourceHandleProto", 7}} {
		d, _ := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(r.msg))
		if !d.(protoreflect.MessageDescriptor).ReservedRanges().Has(r.n) {
			t.Errorf("%s: field %d is not reserved", r.msg, r.n)
		}
	}
}

// describe is a field as the table writes it: name=number, then "map",
// "packed T", "repeated T" or T.
func describe(f protoreflect.FieldDescriptor) string {
	kind := f.Kind().String()
	switch {
	case f.IsMap():
		kind = "map"
	case f.IsList() && f.IsPacked():
		kind = "packed " + kind
	case f.IsList():
		kind = "repeated " + kind
	}
	return fmt.Sprintf("%s=%d %s", f.Name(), f.Number(), kind)
}

func TestEnumValues(t *testing.T) {
	dtypes := map[DataType]int32{
		DataType_DT_INVALID: 0, DataType_DT_FLOAT: 1, DataType_DT_DOUBLE: 2, DataType_DT_INT32: 3,
		DataType_DT_UINT8: 4, DataType_DT_INT16: 5, DataType_DT_INT8: 6, DataType_DT_STRING: 7,
		DataType_DT_COMPLEX64: 8, DataType_DT_INT64: 9, DataType_DT_BOOL: 10, DataType_DT_BFLOAT16: 14,
		DataType_DT_UINT16: 17, DataType_DT_COMPLEX128: 18, DataType_DT_HALF: 19, DataType_DT_RESOURCE: 20,
		DataType_DT_VARIANT: 21, DataType_DT_UINT32: 22, DataType_DT_UINT64: 23, DataType_DT_FLOAT8_E5M2: 24,
		DataType_DT_FLOAT4_E2M1FN: 33, DataType_DT_FLOAT_REF: 101, DataType_DT_FLOAT4_E2M1FN_REF: 133,
	}
	for v, n := range dtypes {
		if int32(v) != n {
			t.Errorf("%s = %d, want %d", v, v, n)
		}
	}
	if n := DataType(0).Descriptor().Values().Len(); n != 34+33 {
		t.Errorf("DataType has %d values, want 67 (0-33 and 101-133)", n)
	}
	states := map[ModelVersionStatus_State]int32{
		ModelVersionStatus_UNKNOWN: 0, ModelVersionStatus_START: 10, ModelVersionStatus_LOADING: 20,
		ModelVersionStatus_AVAILABLE: 30, ModelVersionStatus_UNLOADING: 40, ModelVersionStatus_END: 50,
	}
	for v, n := range states {
		if int32(v) != n {
			t.Errorf("%s = %d, want %d", v, v, n)
		}
	}
	if Code_NOT_FOUND != 5 || Code_UNAUTHENTICATED != 16 || Code_DATA_LOSS != 15 {
		t.Errorf("tensorflow.error.Code: NOT_FOUND %d, UNAUTHENTICATED %d, DATA_LOSS %d", Code_NOT_FOUND, Code_UNAUTHENTICATED, Code_DATA_LOSS)
	}
}

// The gRPC paths are what a TF Serving server routes on; the registered
// file names are upstream's, so a server's reflection or a descriptor
// lookup finds the same files.
func TestServiceNames(t *testing.T) {
	for got, want := range map[string]string{
		PredictionService_Predict_FullMethodName:          "/tensorflow.serving.PredictionService/Predict",
		PredictionService_GetModelMetadata_FullMethodName: "/tensorflow.serving.PredictionService/GetModelMetadata",
		ModelService_GetModelStatus_FullMethodName:        "/tensorflow.serving.ModelService/GetModelStatus",
	} {
		if got != want {
			t.Errorf("method path %s, want %s", got, want)
		}
	}
	for _, f := range []string{
		"tensorflow_serving/apis/predict.proto", "tensorflow_serving/apis/get_model_metadata.proto",
		"tensorflow_serving/apis/get_model_status.proto", "tensorflow/core/framework/tensor.proto",
		"tensorflow/core/protobuf/meta_graph.proto",
	} {
		if _, err := protoregistry.GlobalFiles.FindFileByPath(f); err != nil {
			t.Errorf("file %s is not registered: %v", f, err)
		}
	}
	if (&SignatureDefMap{}).ProtoReflect().Descriptor().FullName() != "tensorflow.serving.SignatureDefMap" {
		t.Error("SignatureDefMap full name differs: the metadata Any's type URL would not match")
	}
}
