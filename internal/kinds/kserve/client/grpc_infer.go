package client

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

func (c *grpcClient) Infer(ctx context.Context, req *InferRequest) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("grpc infer: empty model name")
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	m, err := inferRequestToProto(req)
	if err != nil {
		return nil, fmt.Errorf("grpc %s: %w", op, err)
	}
	codec := codecPool.Get().(*timedCodec)
	codec.marshal, codec.unmarshal = 0, 0
	built := time.Since(start)
	ctx = transport.WithCallWait(ctx)
	r, err := c.stub().ModelInfer(ctx, m, grpc.ForceCodecV2(codec))
	called := time.Since(start)
	cpu := codec.marshal + codec.unmarshal
	codecPool.Put(codec)
	if err != nil {
		return nil, grpcError(ctx, op, err)
	}
	out, err := inferResponseFromProto(r, req)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	total := time.Since(start)
	// The wait means what it means on perfscen's own connection: request
	// out to the reply's first HEADERS (transport.CallWait). Without the
	// handler's moments, the call less the codec's time.
	wait, ok := transport.CallWait(ctx)
	if !ok {
		wait = max(called-built-cpu, 0)
	}
	out.Timing = Timing{SendRecv: total - wait, Wait: wait}
	return out, nil
}

// InferStream opens a ModelStreamInfer call. Timing on streamed responses
// holds only the decode time in SendRecv: a stream has no per-request wait.
func (c *grpcClient) InferStream(ctx context.Context) (Stream, error) {
	s, err := c.stub().ModelStreamInfer(ctx)
	if err != nil {
		return nil, grpcError(ctx, "stream infer", err)
	}
	return &grpcStream{ctx: ctx, s: s}, nil
}

type grpcStream struct {
	ctx context.Context
	s   grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
}

// ParamFinalResponse marks, on a stream response from Triton, whether it
// is the last one for its request; decoupled models send several.
const ParamFinalResponse = "triton_final_response"

// paramEmptyFinal asks Triton for an empty response carrying the final
// flag when a decoupled model ends a request without data, so a stream
// can always tell when a request is complete (as perf_analyzer does).
const paramEmptyFinal = "triton_enable_empty_final_response"

func (g *grpcStream) Send(req *InferRequest) error {
	m, err := inferRequestToProto(req)
	if err != nil {
		return fmt.Errorf("grpc stream send: %w", err)
	}
	if m.Parameters == nil {
		m.Parameters = map[string]*pb.InferParameter{}
	}
	m.Parameters[paramEmptyFinal] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	if err := g.s.Send(m); err != nil {
		return grpcError(g.ctx, "stream send", err)
	}
	return nil
}

func (g *grpcStream) Recv() (*InferResponse, error) {
	r, err := g.s.Recv()
	if err != nil {
		return nil, grpcError(g.ctx, "stream recv", err)
	}
	start := time.Now()
	if msg := r.GetErrorMessage(); msg != "" {
		resp := &InferResponse{}
		if ir := r.GetInferResponse(); ir != nil {
			resp.Model, resp.Version, resp.ID = ir.GetModelName(), ir.GetModelVersion(), ir.GetId()
		}
		return resp, &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: "stream infer", GRPCCode: codes.Unknown, Message: msg}
	}
	out, err := inferResponseFromProto(r.GetInferResponse(), nil)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: "stream recv", Err: err}
	}
	out.Timing.SendRecv = time.Since(start)
	return out, nil
}

func (g *grpcStream) CloseSend() error { return g.s.CloseSend() }

// Final reports whether a stream response completes its request: Triton
// marks each one with triton_final_response; a response without the mark
// (other servers, unary calls) is final.
func (r *InferResponse) Final() bool {
	v, ok := r.Parameters[ParamFinalResponse].(bool)
	return !ok || v
}
