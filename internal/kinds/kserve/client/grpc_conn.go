package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// grpcInferPath is ModelInfer's method path.
const grpcInferPath = "/inference.GRPCInferenceService/ModelInfer"

// grpcConn is one caller's own connection for unary ModelInfer calls: the
// request marshalled here, sent and answered over perfscen's own HTTP/2
// connection (transport.GRPCConn), the reply unmarshalled here. Tensors
// are never copied on the way: raw inputs are written from their own
// memory, raw outputs stay in the connection's reply buffer.
type grpcConn struct {
	conn   *transport.GRPCConn
	req    requestProto
	msg    []byte   // the request's fields but its raw inputs, reused
	tags   []byte   // the raw inputs' field tags and lengths
	pieces [][]byte // the whole request: msg, then tag and raw input in turn
	call   transport.GRPCCall

	rest []byte   // the reply's fields but its raw outputs
	raws [][]byte // the reply's raw outputs, in place in its message
}

// NewConn returns a connection of the caller's own, or nil when the options
// need the shared grpc-go connections: MaxConnections asks for a number of
// connections that requests are spread over, and metadata gRPC does not
// allow on the wire stays grpc-go's to refuse.
func (c *grpcClient) NewConn() Conn {
	if c.opts.MaxConnections > 0 || !c.mdOK {
		return nil
	}
	return &grpcConn{conn: transport.NewGRPCConn(c.own), call: transport.GRPCCall{Op: "infer", Method: grpcInferPath}}
}

func (gc *grpcConn) Infer(ctx context.Context, req *InferRequest, timeout time.Duration) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("grpc infer: empty model name")
	}
	start := time.Now()
	m, err := gc.req.fill(req)
	if err != nil {
		return nil, fmt.Errorf("grpc %s: %w", op, err)
	}
	if gc.call.Msg, err = gc.marshal(m); err != nil {
		return nil, grpcError(ctx, op, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err))
	}
	r, err := gc.conn.Invoke(ctx, &gc.call, timeout)
	if err != nil {
		return nil, err
	}
	var resp pb.ModelInferResponse
	if err := gc.unmarshal(r.Msg, &resp); err != nil {
		return nil, grpcError(ctx, op, status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err))
	}
	out, err := inferResponseFromProto(&resp, req)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	out.Timing = Timing{Wait: r.Wait, SendRecv: time.Since(start) - r.Wait}
	return out, nil
}

func (gc *grpcConn) Close() error { return gc.conn.Close() }

// Field numbers of the byte fields that carry tensors.
var (
	rawInputField  = fieldNumber(&pb.ModelInferRequest{}, "raw_input_contents")
	rawOutputField = fieldNumber(&pb.ModelInferResponse{}, "raw_output_contents")
)

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// marshal encodes m as proto.Marshal does, but leaves its raw inputs in
// their own memory: the message is its other fields, then each raw
// input's tag and length followed by the input itself (the last field,
// so the bytes are proto.Marshal's). A 4.9 MB tensor is not copied per
// request.
func (gc *grpcConn) marshal(m *pb.ModelInferRequest) ([][]byte, error) {
	raws := m.RawInputContents
	m.RawInputContents = nil
	var err error
	gc.msg, err = proto.MarshalOptions{}.MarshalAppend(gc.msg[:0], m)
	m.RawInputContents = raws
	if err != nil {
		return nil, err
	}
	gc.tags = slices.Grow(gc.tags[:0], len(raws)*(protowire.SizeTag(rawInputField)+binary.MaxVarintLen64))
	gc.pieces = append(gc.pieces[:0], gc.msg)
	for _, raw := range raws {
		k := len(gc.tags) // within capacity: the slices taken stay valid
		gc.tags = protowire.AppendTag(gc.tags, rawInputField, protowire.BytesType)
		gc.tags = protowire.AppendVarint(gc.tags, uint64(len(raw)))
		gc.pieces = append(gc.pieces, gc.tags[k:], raw)
	}
	return gc.pieces, nil
}

// unmarshal decodes b into r as proto.Unmarshal does, but leaves the raw
// outputs in place in b (the connection's reply buffer, valid until its
// next call) instead of copying each: the other fields are decoded from a
// copy without them. What it cannot walk it leaves to proto.Unmarshal,
// which reports the error.
func (gc *grpcConn) unmarshal(b []byte, r *pb.ModelInferResponse) error {
	gc.rest, gc.raws = gc.rest[:0], gc.raws[:0]
	for in := b; len(in) > 0; {
		num, typ, n := protowire.ConsumeTag(in)
		if n < 0 {
			return proto.Unmarshal(b, r)
		}
		m := protowire.ConsumeFieldValue(num, typ, in[n:])
		if m < 0 {
			return proto.Unmarshal(b, r)
		}
		if num == rawOutputField && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(in[n:])
			gc.raws = append(gc.raws, v)
		} else {
			gc.rest = append(gc.rest, in[:n+m]...)
		}
		in = in[n+m:]
	}
	if err := proto.Unmarshal(gc.rest, r); err != nil {
		return err
	}
	if len(gc.raws) > 0 {
		r.RawOutputContents = gc.raws
	}
	return nil
}
