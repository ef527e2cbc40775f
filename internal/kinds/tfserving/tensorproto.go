package tfserving

import (
	"encoding/binary"
	"fmt"
	"math"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// toProto is t as TensorFlow's TensorProto, the way TensorFlow's own
// clients send it (tf.make_tensor_proto): numeric types as tensor_content,
// the raw little-endian values (DT_HALF and DT_BFLOAT16 included: TensorFlow
// reads tensor_content for every type but strings); DT_STRING as
// string_val, one entry per element. The proto aliases t.Raw.
func toProto(t tensor.Tensor) (*pb.TensorProto, error) {
	tf, err := toTF(t.DataType)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	p := &pb.TensorProto{Dtype: tf, TensorShape: shapeProto(t.Shape)}
	if t.DataType == tensor.BYTES {
		elems, err := tensor.BytesElements(t.Raw)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		p.StringVal = elems
		return p, nil
	}
	p.TensorContent = t.Raw
	return p, nil
}

func shapeProto(shape []int64) *pb.TensorShapeProto {
	s := &pb.TensorShapeProto{Dim: make([]*pb.TensorShapeProto_Dim, len(shape))}
	for i, d := range shape {
		s.Dim[i] = &pb.TensorShapeProto_Dim{Size: d}
	}
	return s
}

// fieldProto is t as TensorFlow's Tensor::AsProtoField writes it, which is
// how TF Serving answers Predict by default: every value in its dtype's
// typed field (half_val holds DT_HALF and DT_BFLOAT16 bit patterns, one per
// int32). The embedded flavour answers this way.
func fieldProto(t tensor.Tensor) (*pb.TensorProto, error) {
	tf, err := toTF(t.DataType)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	p := &pb.TensorProto{Dtype: tf, TensorShape: shapeProto(t.Shape)}
	raw := t.Raw
	size := t.DataType.Size()
	if t.DataType != tensor.BYTES && (size == 0 || len(raw)%size != 0) {
		return nil, fmt.Errorf("tensor %q: %d bytes of %s", t.Name, len(raw), t.DataType)
	}
	n := 0
	if size > 0 {
		n = len(raw) / size
	}
	le := binary.LittleEndian
	switch t.DataType {
	case tensor.BYTES:
		elems, err := tensor.BytesElements(raw)
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		p.StringVal = elems
	case tensor.FP32:
		p.FloatVal = make([]float32, n)
		for i := range n {
			p.FloatVal[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
	case tensor.FP64:
		p.DoubleVal = make([]float64, n)
		for i := range n {
			p.DoubleVal[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
	case tensor.FP16, tensor.BF16:
		p.HalfVal = make([]int32, n)
		for i := range n {
			p.HalfVal[i] = int32(le.Uint16(raw[2*i:]))
		}
	case tensor.INT8:
		p.IntVal = make([]int32, n)
		for i := range n {
			p.IntVal[i] = int32(int8(raw[i]))
		}
	case tensor.UINT8:
		p.IntVal = make([]int32, n)
		for i := range n {
			p.IntVal[i] = int32(raw[i])
		}
	case tensor.INT16:
		p.IntVal = make([]int32, n)
		for i := range n {
			p.IntVal[i] = int32(int16(le.Uint16(raw[2*i:])))
		}
	case tensor.UINT16:
		p.IntVal = make([]int32, n)
		for i := range n {
			p.IntVal[i] = int32(le.Uint16(raw[2*i:]))
		}
	case tensor.INT32:
		p.IntVal = make([]int32, n)
		for i := range n {
			p.IntVal[i] = int32(le.Uint32(raw[4*i:]))
		}
	case tensor.INT64:
		p.Int64Val = make([]int64, n)
		for i := range n {
			p.Int64Val[i] = int64(le.Uint64(raw[8*i:]))
		}
	case tensor.UINT32:
		p.Uint32Val = make([]uint32, n)
		for i := range n {
			p.Uint32Val[i] = le.Uint32(raw[4*i:])
		}
	case tensor.UINT64:
		p.Uint64Val = make([]uint64, n)
		for i := range n {
			p.Uint64Val[i] = le.Uint64(raw[8*i:])
		}
	case tensor.BOOL:
		p.BoolVal = make([]bool, n)
		for i := range n {
			p.BoolVal[i] = raw[i] != 0
		}
	}
	return p, nil
}

// fromProto decodes a TensorProto as TensorFlow's Tensor::FromProto does:
// tensor_content when present, else the dtype's typed field, where fewer
// values than the shape holds are padded with the last one (a single value
// fills the tensor) and none at all means zeros.
func fromProto(name string, p *pb.TensorProto) (tensor.Tensor, error) {
	if p == nil {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: empty", name)
	}
	dt, err := fromTF(p.GetDtype())
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	sh := p.GetTensorShape()
	if sh.GetUnknownRank() {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: shape of unknown rank", name)
	}
	shape := make([]int64, len(sh.GetDim()))
	for i, d := range sh.GetDim() {
		shape[i] = d.GetSize()
	}
	n64, err := tensor.ElementCount(shape)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	t := tensor.Tensor{Name: name, DataType: dt, Shape: shape}
	if dt == tensor.BYTES {
		if len(p.TensorContent) > 0 {
			return t, fmt.Errorf("tensor %q: DT_STRING values in tensor_content (they go in string_val)", name)
		}
		return fillStrings(t, p.StringVal, n64)
	}
	size := int64(dt.Size())
	if n64 > math.MaxInt32/size {
		return t, fmt.Errorf("tensor %q: shape %v is too large", name, shape)
	}
	n := int(n64)
	if len(p.TensorContent) > 0 || n == 0 {
		if int64(len(p.TensorContent)) != n64*size {
			return t, fmt.Errorf("tensor %q: tensor_content holds %d bytes, shape %v of %s needs %d", name, len(p.TensorContent), shape, p.GetDtype(), n64*size)
		}
		t.Raw = p.TensorContent
		return t, nil
	}
	var count int
	var put func(out []byte, i int) // writes value i of the field at out
	le := binary.LittleEndian
	switch dt {
	case tensor.FP32:
		count = len(p.FloatVal)
		put = func(out []byte, i int) { le.PutUint32(out, math.Float32bits(p.FloatVal[i])) }
	case tensor.FP64:
		count = len(p.DoubleVal)
		put = func(out []byte, i int) { le.PutUint64(out, math.Float64bits(p.DoubleVal[i])) }
	case tensor.FP16, tensor.BF16:
		count = len(p.HalfVal)
		put = func(out []byte, i int) { le.PutUint16(out, uint16(p.HalfVal[i])) }
	case tensor.INT8, tensor.UINT8:
		count = len(p.IntVal)
		put = func(out []byte, i int) { out[0] = byte(p.IntVal[i]) }
	case tensor.INT16, tensor.UINT16:
		count = len(p.IntVal)
		put = func(out []byte, i int) { le.PutUint16(out, uint16(p.IntVal[i])) }
	case tensor.INT32:
		count = len(p.IntVal)
		put = func(out []byte, i int) { le.PutUint32(out, uint32(p.IntVal[i])) }
	case tensor.INT64:
		count = len(p.Int64Val)
		put = func(out []byte, i int) { le.PutUint64(out, uint64(p.Int64Val[i])) }
	case tensor.UINT32:
		count = len(p.Uint32Val)
		put = func(out []byte, i int) { le.PutUint32(out, p.Uint32Val[i]) }
	case tensor.UINT64:
		count = len(p.Uint64Val)
		put = func(out []byte, i int) { le.PutUint64(out, p.Uint64Val[i]) }
	case tensor.BOOL:
		count = len(p.BoolVal)
		put = func(out []byte, i int) {
			out[0] = 0
			if p.BoolVal[i] {
				out[0] = 1
			}
		}
	}
	if count > n {
		return t, fmt.Errorf("tensor %q: %d values for shape %v (%d elements)", name, count, shape, n)
	}
	if count < n && n64*size > maxPadded {
		return t, fmt.Errorf("tensor %q: %d values padded to shape %v is over %d bytes", name, count, shape, maxPadded)
	}
	s := int(size)
	t.Raw = make([]byte, n*s)
	if count == 0 {
		return t, nil
	}
	for i := range count {
		put(t.Raw[i*s:], i)
	}
	last := t.Raw[(count-1)*s : count*s]
	for i := count; i < n; i++ {
		copy(t.Raw[i*s:], last)
	}
	return t, nil
}

// maxPadded bounds what a few typed values may expand to: a reply of a few
// bytes must not make the client allocate gigabytes.
const maxPadded = 256 << 20

func fillStrings(t tensor.Tensor, vals [][]byte, n int64) (tensor.Tensor, error) {
	count := int64(len(vals))
	if count > n {
		return t, fmt.Errorf("tensor %q: %d strings for shape %v (%d elements)", t.Name, count, t.Shape, n)
	}
	if n > maxPadded/4 {
		return t, fmt.Errorf("tensor %q: %d strings padded to shape %v is too large", t.Name, count, t.Shape)
	}
	elems := make([][]byte, n)
	copy(elems, vals)
	for i := count; i < n && count > 0; i++ {
		elems[i] = vals[count-1]
	}
	if count == 0 {
		for i := range elems {
			elems[i] = []byte{}
		}
	}
	t.Raw = tensor.EncodeBytesElements(elems)
	return t, nil
}
