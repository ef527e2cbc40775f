package kservev2

import (
	"errors"
	"fmt"
	"strconv"
)

// HeaderContentLength names the HTTP header that carries the byte length of
// the JSON part of a body using the binary tensor data extension.
const HeaderContentLength = "Inference-Header-Content-Length"

// ErrBinaryBody reports a malformed binary-extension body.
var ErrBinaryBody = errors.New("malformed binary tensor data")

// EncodeBinaryBody concatenates the JSON header and the binary tensor data in
// order; the header's length goes in HeaderContentLength.
func EncodeBinaryBody(header []byte, binaries ...[]byte) []byte {
	n := len(header)
	for _, b := range binaries {
		n += len(b)
	}
	return AppendBinaryBody(make([]byte, 0, n), header, binaries...)
}

// AppendBinaryBody is EncodeBinaryBody into a caller-owned buffer.
func AppendBinaryBody(dst, header []byte, binaries ...[]byte) []byte {
	dst = append(dst, header...)
	for _, b := range binaries {
		dst = append(dst, b...)
	}
	return dst
}

// ParseHeaderLength parses an Inference-Header-Content-Length value against
// the body length (both after decompression).
func ParseHeaderLength(value string, bodyLen int) (int, error) {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q is not a 32-bit integer", ErrBinaryBody, HeaderContentLength, value)
	}
	if n < 0 || int(n) > bodyLen {
		return 0, fmt.Errorf("%w: %s %d outside body length %d", ErrBinaryBody, HeaderContentLength, n, bodyLen)
	}
	return int(n), nil
}

// SplitBinaryBody separates the JSON header from the binary tensor data.
func SplitBinaryBody(body []byte, headerLen int) (header []byte, rest []byte, err error) {
	if headerLen < 0 || headerLen > len(body) {
		return nil, nil, fmt.Errorf("%w: header length %d outside body length %d", ErrBinaryBody, headerLen, len(body))
	}
	return body[:headerLen:headerLen], body[headerLen:], nil
}

// BinaryDataSize returns a tensor's "binary_data_size" parameter; ok is false
// when the tensor carries no binary data.
func BinaryDataSize(p Parameters) (size int64, ok bool, err error) {
	size, ok, err = p.Int64(ParamBinaryDataSize)
	if err == nil && ok && size < 0 {
		err = fmt.Errorf("parameter %q: %d is negative", ParamBinaryDataSize, size)
	}
	return size, ok, err
}

// SliceBinary cuts rest into consecutive pieces of the given sizes; a
// negative size means "no binary data" and yields nil. The sizes must
// account for rest exactly.
func SliceBinary(sizes []int64, rest []byte) ([][]byte, error) {
	out := make([][]byte, len(sizes))
	off := int64(0)
	for i, sz := range sizes {
		if sz < 0 {
			continue
		}
		if sz > int64(len(rest))-off {
			return nil, fmt.Errorf("%w: tensor %d needs %d bytes at offset %d, only %d remain", ErrBinaryBody, i, sz, off, int64(len(rest))-off)
		}
		out[i] = rest[off : off+sz : off+sz]
		off += sz
	}
	if off != int64(len(rest)) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the last binary tensor", ErrBinaryBody, int64(len(rest))-off)
	}
	return out, nil
}

// SliceInputs assigns the binary data in rest to the inputs that declare
// binary_data_size, in order; entries for JSON or shm inputs are nil.
func SliceInputs(inputs []InferInput, rest []byte) ([][]byte, error) {
	sizes := make([]int64, len(inputs))
	for i, in := range inputs {
		sz, ok, err := BinaryDataSize(in.Parameters)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", in.Name, err)
		}
		if !ok {
			sz = -1
		}
		sizes[i] = sz
	}
	return SliceBinary(sizes, rest)
}

// SliceOutputs is SliceInputs for response outputs.
func SliceOutputs(outputs []InferOutput, rest []byte) ([][]byte, error) {
	sizes := make([]int64, len(outputs))
	for i, out := range outputs {
		sz, ok, err := BinaryDataSize(out.Parameters)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", out.Name, err)
		}
		if !ok {
			sz = -1
		}
		sizes[i] = sz
	}
	return SliceBinary(sizes, rest)
}
