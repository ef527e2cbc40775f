package client

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kinds/kserve/wire/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// grpcInferPath is ModelInfer's method path.
const grpcInferPath = "/inference.GRPCInferenceService/ModelInfer"

// grpcConn is one caller's own connection for unary ModelInfer calls: the
// request marshalled here, sent and answered over perfscen's own HTTP/2
// connection (transport.GRPCConn), the reply unmarshalled here.
type grpcConn struct {
	conn *transport.GRPCConn
	req  requestProto
	msg  []byte // the marshalled request, reused
	one  [1][]byte
	call transport.GRPCCall
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
	gc.msg, err = proto.MarshalOptions{}.MarshalAppend(gc.msg[:0], m)
	if err != nil {
		return nil, grpcError(ctx, op, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err))
	}
	gc.one[0] = gc.msg
	gc.call.Msg = gc.one[:]
	r, err := gc.conn.Invoke(ctx, &gc.call, timeout)
	if err != nil {
		return nil, err
	}
	var resp pb.ModelInferResponse
	if err := proto.Unmarshal(r.Msg, &resp); err != nil {
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
