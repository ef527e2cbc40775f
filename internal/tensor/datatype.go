package tensor

import (
	"fmt"
	"strings"
)

// DataType is a tensor element type as spelled on the wire ("FP32", "BYTES").
type DataType string

// The protocol datatypes. BF16 is a Triton addition.
const (
	BOOL   DataType = "BOOL"
	UINT8  DataType = "UINT8"
	UINT16 DataType = "UINT16"
	UINT32 DataType = "UINT32"
	UINT64 DataType = "UINT64"
	INT8   DataType = "INT8"
	INT16  DataType = "INT16"
	INT32  DataType = "INT32"
	INT64  DataType = "INT64"
	FP16   DataType = "FP16"
	BF16   DataType = "BF16"
	FP32   DataType = "FP32"
	FP64   DataType = "FP64"
	BYTES  DataType = "BYTES"
)

// DataTypes lists every datatype in a stable order, for tables and messages.
var DataTypes = []DataType{BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, FP64, BYTES}

type typeInfo struct {
	size   int
	config string
}

var typeInfos = map[DataType]typeInfo{
	BOOL:   {1, "TYPE_BOOL"},
	UINT8:  {1, "TYPE_UINT8"},
	UINT16: {2, "TYPE_UINT16"},
	UINT32: {4, "TYPE_UINT32"},
	UINT64: {8, "TYPE_UINT64"},
	INT8:   {1, "TYPE_INT8"},
	INT16:  {2, "TYPE_INT16"},
	INT32:  {4, "TYPE_INT32"},
	INT64:  {8, "TYPE_INT64"},
	FP16:   {2, "TYPE_FP16"},
	BF16:   {2, "TYPE_BF16"},
	FP32:   {4, "TYPE_FP32"},
	FP64:   {8, "TYPE_FP64"},
	// Triton's config calls variable-length bytes TYPE_STRING.
	BYTES: {0, "TYPE_STRING"},
}

// ParseDataType accepts the exact protocol spelling of a datatype.
func ParseDataType(s string) (DataType, error) {
	dt := DataType(s)
	if _, ok := typeInfos[dt]; ok {
		return dt, nil
	}
	return "", fmt.Errorf("unknown datatype %q (valid: %s)", s, validList())
}

func validList() string {
	names := make([]string, len(DataTypes))
	for i, dt := range DataTypes {
		names[i] = string(dt)
	}
	return strings.Join(names, ", ")
}

// Valid reports whether dt is one of the protocol datatypes.
func (dt DataType) Valid() bool {
	_, ok := typeInfos[dt]
	return ok
}

// Size is the number of bytes per element; 0 for BYTES and unknown types.
func (dt DataType) Size() int { return typeInfos[dt].size }

// ConfigName is the Triton model-config enum name ("TYPE_FP32"); "" if dt is unknown.
func (dt DataType) ConfigName() string { return typeInfos[dt].config }

// IsInteger reports whether dt is a signed or unsigned integer type.
func (dt DataType) IsInteger() bool {
	switch dt {
	case UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64:
		return true
	}
	return false
}

// IsFloat reports whether dt is a floating-point type.
func (dt DataType) IsFloat() bool {
	switch dt {
	case FP16, BF16, FP32, FP64:
		return true
	}
	return false
}
