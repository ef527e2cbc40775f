package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeBytesElements serializes BYTES elements as length-prefixed records.
func EncodeBytesElements(elems [][]byte) []byte {
	n := 0
	for _, e := range elems {
		n += 4 + len(e)
	}
	return AppendBytesElements(make([]byte, 0, n), elems)
}

// AppendBytesElements appends the serialized elements to dst.
func AppendBytesElements(dst []byte, elems [][]byte) []byte {
	for _, e := range elems {
		if uint64(len(e)) > math.MaxUint32 {
			// The wire length prefix is 32 bits; a caller handing us 4 GiB
			// in one element has a bug no error return would help with.
			panic("kserve: BYTES element longer than 2^32-1 bytes")
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e)))
		dst = append(dst, e...)
	}
	return dst
}

// BytesElements splits serialized BYTES data into its elements. The returned
// slices alias raw.
func BytesElements(raw []byte) ([][]byte, error) {
	n, err := CountBytesElements(raw)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	for off := 0; off < len(raw); {
		l := int(binary.LittleEndian.Uint32(raw[off:]))
		off += 4
		out = append(out, raw[off:off+l:off+l])
		off += l
	}
	return out, nil
}

// CountBytesElements validates serialized BYTES data and counts its elements
// without allocating.
func CountBytesElements(raw []byte) (int, error) {
	count := 0
	for off := 0; off < len(raw); count++ {
		if len(raw)-off < 4 {
			return 0, fmt.Errorf("BYTES element %d at offset %d: truncated length prefix (%d bytes left)", count, off, len(raw)-off)
		}
		l := uint64(binary.LittleEndian.Uint32(raw[off:]))
		off += 4
		if l > uint64(len(raw)-off) {
			return 0, fmt.Errorf("BYTES element %d at offset %d: length %d exceeds the %d bytes left", count, off-4, l, len(raw)-off)
		}
		off += int(l)
	}
	return count, nil
}
