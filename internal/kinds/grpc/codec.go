package grpc

import (
	"fmt"

	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// frame is one message already serialised: the load sends the bytes the
// input data were turned into once, and keeps replies as bytes, decoding
// them only when a reply is checked (outside the timed section).
type frame struct{ b []byte }

// rawCodec passes frames through; it is forced on load calls only, so
// preflight and reflection use the ordinary proto codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(f.b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("raw codec: cannot receive into %T", v)
	}
	f.b = data.Materialize()
	return nil
}

// Name keeps the standard content-subtype: servers see plain protobuf.
func (rawCodec) Name() string { return proto.Name }
