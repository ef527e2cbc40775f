package tensor

import (
	"errors"
	"fmt"
	"math"
)

// Tensor is a named tensor in its raw wire form: little-endian, row-major,
// packed; BYTES elements each carry a 4-byte little-endian length prefix.
type Tensor struct {
	Name     string
	DataType DataType
	Shape    []int64
	Raw      []byte
}

// ErrShape reports a shape that cannot describe a tensor.
var ErrShape = errors.New("invalid shape")

// ElementCount multiplies the dimensions, rejecting negative (variable) dims
// and products that overflow int64. The empty shape is a scalar of 1 element.
func ElementCount(shape []int64) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("%w: dim %d is %d", ErrShape, i, d)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("%w: element count of %v overflows int64", ErrShape, shape)
		}
		n *= d
	}
	return n, nil
}

// ByteSize is the raw size a fixed-size tensor of this shape needs. It fails
// for BYTES (whose size depends on the content) and unknown types.
func ByteSize(dt DataType, shape []int64) (int64, error) {
	if dt == BYTES {
		return 0, fmt.Errorf("byte size of a BYTES tensor depends on its content")
	}
	size := int64(dt.Size())
	if size == 0 {
		return 0, fmt.Errorf("unknown datatype %q", dt)
	}
	n, err := ElementCount(shape)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt64/size {
		return 0, fmt.Errorf("%w: byte size of %v %s overflows int64", ErrShape, shape, dt)
	}
	return n * size, nil
}

// Check verifies that Raw holds exactly the data Shape and DataType call for.
func (t Tensor) Check() error {
	if !t.DataType.Valid() {
		return fmt.Errorf("tensor %q: unknown datatype %q", t.Name, t.DataType)
	}
	n, err := ElementCount(t.Shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if t.DataType == BYTES {
		got, err := CountBytesElements(t.Raw)
		if err != nil {
			return fmt.Errorf("tensor %q: %w", t.Name, err)
		}
		if int64(got) != n {
			return fmt.Errorf("tensor %q: %d BYTES elements, shape %v needs %d", t.Name, got, t.Shape, n)
		}
		return nil
	}
	want, err := ByteSize(t.DataType, t.Shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if int64(len(t.Raw)) != want {
		return fmt.Errorf("tensor %q: %d bytes of data, shape %v %s needs %d", t.Name, len(t.Raw), t.Shape, t.DataType, want)
	}
	return nil
}
