package kservev2

import (
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func TestDataTypeProto(t *testing.T) {
	if len(protoTypes) != len(tensor.DataTypes) {
		t.Fatalf("protoTypes covers %d types, tensor.DataTypes has %d", len(protoTypes), len(tensor.DataTypes))
	}
	for _, dt := range tensor.DataTypes {
		p := DataTypeProto(dt)
		// The enum's names are the model-config names.
		if p.String() != dt.ConfigName() {
			t.Errorf("%s: proto %s, config name %s", dt, p, dt.ConfigName())
		}
		if back, err := DataTypeFromProto(p); err != nil || back != dt {
			t.Errorf("DataTypeFromProto(%v) = %q, %v", p, back, err)
		}
	}
	if DataTypeProto("NOPE") != inferencepb.DataType_TYPE_INVALID {
		t.Error("unknown datatype is not TYPE_INVALID")
	}
	if _, err := DataTypeFromProto(inferencepb.DataType_TYPE_INVALID); err == nil {
		t.Error("TYPE_INVALID maps to a datatype")
	}
}
