package client

import (
	"sync"
	"time"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// timedCodec wraps the proto codec for one call and records how long
// marshalling and unmarshalling took, the client-side CPU part of the call.
type timedCodec struct {
	inner     encoding.CodecV2
	marshal   time.Duration
	unmarshal time.Duration
}

var protoCodec = encoding.GetCodecV2(proto.Name)

var codecPool = sync.Pool{New: func() any { return &timedCodec{inner: protoCodec} }}

func (c *timedCodec) Marshal(v any) (mem.BufferSlice, error) {
	t := time.Now()
	out, err := c.inner.Marshal(v)
	c.marshal += time.Since(t)
	return out, err
}

func (c *timedCodec) Unmarshal(data mem.BufferSlice, v any) error {
	t := time.Now()
	err := c.inner.Unmarshal(data, v)
	c.unmarshal += time.Since(t)
	return err
}

// Name keeps the standard content-subtype so servers see plain protobuf.
func (c *timedCodec) Name() string { return proto.Name }
