package tfserving

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func mustRaw(t *testing.T, dt tensor.DataType, v ...float64) []byte {
	t.Helper()
	raw, err := tensor.FromFloat64s(dt, v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Every datatype survives both encodings TF Serving uses (tensor_content,
// as clients send, and the typed fields, as TF Serving answers) and the
// decode, value for value.
func TestTensorProtoRoundTrip(t *testing.T) {
	for _, p := range dtypes {
		dt := p.dt
		t.Run(string(dt), func(t *testing.T) {
			in := tensor.Tensor{Name: "x", DataType: dt, Shape: []int64{2, 2}}
			if dt == tensor.BYTES {
				in.Raw = tensor.EncodeBytesElements([][]byte{[]byte("a"), {0xff, 0}, nil, []byte("dddd")})
			} else {
				in.Raw = mustRaw(t, dt, 1, 0, 1, 1)
				if dt.IsFloat() || dt.IsInteger() && dt != tensor.UINT8 && dt != tensor.UINT16 && dt != tensor.UINT32 && dt != tensor.UINT64 {
					in.Raw = mustRaw(t, dt, -1, 0, 2, 100)
				}
			}
			for name, enc := range map[string]func(tensor.Tensor) (*pb.TensorProto, error){"content": toProto, "field": fieldProto} {
				tp, err := enc(in)
				if err != nil {
					t.Fatal(err)
				}
				if tp.Dtype != p.tf || len(tp.TensorShape.Dim) != 2 {
					t.Fatalf("%s: dtype %s, shape %v", name, tp.Dtype, tp.TensorShape)
				}
				if name == "content" && dt != tensor.BYTES && len(tp.TensorContent) == 0 {
					t.Errorf("content: %s not in tensor_content", dt)
				}
				if name == "field" && len(tp.TensorContent) != 0 {
					t.Errorf("field: %s in tensor_content", dt)
				}
				// Through the wire, as a server would see it.
				b, err := proto.Marshal(tp)
				if err != nil {
					t.Fatal(err)
				}
				back := &pb.TensorProto{}
				if err := proto.Unmarshal(b, back); err != nil {
					t.Fatal(err)
				}
				got, err := fromProto("x", back)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !reflect.DeepEqual(got.Shape, in.Shape) || string(got.Raw) != string(in.Raw) || got.DataType != dt {
					t.Errorf("%s: got %s %v %x, want %s %v %x", name, got.DataType, got.Shape, got.Raw, dt, in.Shape, in.Raw)
				}
			}
		})
	}
}

// TensorFlow's FromProto rules: fewer typed values than elements are
// padded with the last one, none means zeros; half_val carries DT_HALF and
// DT_BFLOAT16 bit patterns; int_val carries the small integer types.
func TestTensorProtoTypedFields(t *testing.T) {
	shape := &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 3}}}
	cases := []struct {
		name string
		tp   *pb.TensorProto
		want []byte
	}{
		{"broadcast float", &pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: shape, FloatVal: []float32{2.5}}, mustRaw(t, tensor.FP32, 2.5, 2.5, 2.5)},
		{"pad with last", &pb.TensorProto{Dtype: pb.DataType_DT_INT32, TensorShape: shape, IntVal: []int32{1, -7}}, mustRaw(t, tensor.INT32, 1, -7, -7)},
		{"no values are zeros", &pb.TensorProto{Dtype: pb.DataType_DT_DOUBLE, TensorShape: shape}, make([]byte, 24)},
		{"half", &pb.TensorProto{Dtype: pb.DataType_DT_HALF, TensorShape: shape, HalfVal: []int32{0x3c00, 0xc000, 0}}, mustRaw(t, tensor.FP16, 1, -2, 0)},
		{"bfloat16", &pb.TensorProto{Dtype: pb.DataType_DT_BFLOAT16, TensorShape: shape, HalfVal: []int32{0x3f80}}, mustRaw(t, tensor.BF16, 1, 1, 1)},
		{"int8 from int_val", &pb.TensorProto{Dtype: pb.DataType_DT_INT8, TensorShape: shape, IntVal: []int32{-1, 2, 127}}, mustRaw(t, tensor.INT8, -1, 2, 127)},
		{"uint16 from int_val", &pb.TensorProto{Dtype: pb.DataType_DT_UINT16, TensorShape: shape, IntVal: []int32{65535, 0, 1}}, mustRaw(t, tensor.UINT16, 65535, 0, 1)},
		{"bool", &pb.TensorProto{Dtype: pb.DataType_DT_BOOL, TensorShape: shape, BoolVal: []bool{true, false}}, []byte{1, 0, 0}},
		{"int64", &pb.TensorProto{Dtype: pb.DataType_DT_INT64, TensorShape: shape, Int64Val: []int64{math.MinInt64, 0, math.MaxInt64}}, mustRaw(t, tensor.INT64, 0, 0, 0)},
		{"strings padded", &pb.TensorProto{Dtype: pb.DataType_DT_STRING, TensorShape: shape, StringVal: [][]byte{[]byte("ab")}}, tensor.EncodeBytesElements([][]byte{[]byte("ab"), []byte("ab"), []byte("ab")})},
		{"scalar", &pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: &pb.TensorShapeProto{}, FloatVal: []float32{1}}, mustRaw(t, tensor.FP32, 1)},
	}
	cases[8].want = tensor.EncodeInt64s([]int64{math.MinInt64, 0, math.MaxInt64})
	for _, c := range cases {
		got, err := fromProto("x", c.tp)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(got.Raw) != string(c.want) {
			t.Errorf("%s: raw %x, want %x", c.name, got.Raw, c.want)
		}
	}
}

func TestTensorProtoRefused(t *testing.T) {
	shape := &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 2}}}
	cases := []struct {
		tp   *pb.TensorProto
		want string
	}{
		{&pb.TensorProto{Dtype: pb.DataType_DT_COMPLEX64, TensorShape: shape}, "DT_COMPLEX64 is not supported"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: shape, TensorContent: []byte{1, 2, 3}}, "tensor_content holds 3 bytes"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: shape, FloatVal: []float32{1, 2, 3}}, "3 values for shape [2]"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: &pb.TensorShapeProto{UnknownRank: true}}, "unknown rank"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: -1}}}}, "invalid shape"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_STRING, TensorShape: shape, TensorContent: []byte{1}}, "DT_STRING values in tensor_content"},
		{&pb.TensorProto{Dtype: pb.DataType_DT_FLOAT, TensorShape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 1 << 40}}}, FloatVal: []float32{1}}, "too large"},
		{nil, "empty"},
	}
	for _, c := range cases {
		if _, err := fromProto("x", c.tp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.tp, err, c.want)
		}
	}
}

// FuzzFromProto: no TensorProto on the wire makes the decoder panic or
// hand back a tensor inconsistent with its shape.
func FuzzFromProto(f *testing.F) {
	for _, tp := range []*pb.TensorProto{
		{Dtype: pb.DataType_DT_FLOAT, TensorShape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 2}}}, FloatVal: []float32{1}},
		{Dtype: pb.DataType_DT_STRING, TensorShape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 2}}}, StringVal: [][]byte{[]byte("a")}},
		{Dtype: pb.DataType_DT_HALF, TensorShape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: 1}}}, TensorContent: []byte{0, 0x3c}},
	} {
		b, _ := proto.Marshal(tp)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tp := &pb.TensorProto{}
		if proto.Unmarshal(b, tp) != nil {
			return
		}
		got, err := fromProto("x", tp)
		if err != nil {
			return
		}
		if err := got.Check(); err != nil {
			t.Fatalf("decoded tensor is inconsistent: %v", err)
		}
	})
}
