package refserver

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kserve"
	"github.com/perfscen/perfscen/internal/kserve/inferencepb"
)

func (g *grpcService) ModelInfer(ctx context.Context, r *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	resp, err := g.infer(ctx, r)
	return resp, grpcErr(err)
}

// infer runs one gRPC request; errors are not yet gRPC statuses.
func (g *grpcService) infer(ctx context.Context, r *inferencepb.ModelInferRequest) (resp *inferencepb.ModelInferResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			g.s.log.Error("panic in gRPC infer", "model", r.GetModelName(), "panic", p)
			resp, err = nil, errorf(codeInternal, "internal server error")
		}
	}()
	received := time.Now()
	req, err := parseGRPCInfer(r)
	if err != nil {
		return nil, err
	}
	req.received = received
	out, err := g.s.infer(ctx, req)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	resp = &inferencepb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: out.version, Id: r.GetId()}
	for _, o := range out.outputs {
		resp.Outputs = append(resp.Outputs, &inferencepb.ModelInferResponse_InferOutputTensor{Name: o.name, Datatype: string(o.dtype), Shape: o.shape})
		if o.req.shm == nil {
			resp.RawOutputContents = append(resp.RawOutputContents, o.raw)
		}
	}
	out.finish(time.Since(t), nil)
	return resp, nil
}

// parseGRPCInfer maps a ModelInferRequest onto an inferRequest: each input
// without contents or shm takes the next raw_input_contents entry.
func parseGRPCInfer(r *inferencepb.ModelInferRequest) (*inferRequest, error) {
	req := &inferRequest{model: r.GetModelName(), version: r.GetModelVersion(), id: r.GetId()}
	if _, err := parseRequestParams(kserve.ParamsFromProto(r.GetParameters()), &req.seq, &req.timeout); err != nil {
		return nil, err
	}
	raws := r.GetRawInputContents()
	next := 0
	for _, in := range r.GetInputs() {
		dt, err := kserve.ParseDataType(in.GetDatatype())
		if err != nil {
			return nil, errorf(codeInvalidArg, "input '%s': %v", in.GetName(), err)
		}
		ii := inferInput{name: in.GetName(), dtype: dt, shape: in.GetShape()}
		ref, err := shmParams(kserve.ParamsFromProto(in.GetParameters()), "input", in.GetName())
		if err != nil {
			return nil, err
		}
		switch {
		case ref != nil:
			if in.GetContents() != nil {
				return nil, errorf(codeInvalidArg, "input '%s' uses shared memory and must not set contents", in.GetName())
			}
			ii.shm = ref
		case in.GetContents() != nil:
			if len(raws) > 0 {
				return nil, errorf(codeInvalidArg, "contents field must not be specified when using raw_input_contents for '%s' for model '%s'", in.GetName(), r.GetModelName())
			}
			contents := in.GetContents()
			ii.decode = func(dt kserve.DataType, _ []int64) ([]byte, error) { return kserve.ContentsToRaw(dt, contents) }
		default:
			if next >= len(raws) {
				return nil, errorf(codeInvalidArg, "input '%s' for model '%s' has no data: no contents, shared memory or raw_input_contents entry", in.GetName(), r.GetModelName())
			}
			ii.raw, ii.hasRaw = raws[next], true
			next++
		}
		req.inputs = append(req.inputs, ii)
	}
	if next != len(raws) {
		return nil, errorf(codeInvalidArg, "%d raw_input_contents entries given for %d inputs without contents for model '%s'", len(raws), next, r.GetModelName())
	}
	if len(r.GetOutputs()) > 0 {
		req.outputs = []outputRequest{}
	}
	for _, o := range r.GetOutputs() {
		ref, err := shmParams(kserve.ParamsFromProto(o.GetParameters()), "output", o.GetName())
		if err != nil {
			return nil, err
		}
		req.outputs = append(req.outputs, outputRequest{name: o.GetName(), shm: ref})
	}
	return req, nil
}

// ModelStreamInfer serves a bidirectional stream: requests run
// concurrently, but answers (each carrying its request's id, a request's
// error coming back in-stream as error_message) leave in the order the
// requests arrived, as from Triton for non-decoupled models. A dropped
// request closes the stream with UNAVAILABLE.
func (g *grpcService) ModelStreamInfer(stream grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	var (
		wg     sync.WaitGroup
		sendMu sync.Mutex
	)
	defer wg.Wait()
	send := func(m *inferencepb.ModelStreamInferResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if err := stream.Send(m); err != nil {
			cancel(err)
		}
	}
	order := newStreamOrder(send)
	// Recv runs apart so a dropped request can end the stream even while
	// the client is not sending.
	type recvd struct {
		r   *inferencepb.ModelInferRequest
		err error
	}
	in := make(chan recvd)
	go func() {
		for {
			r, err := stream.Recv()
			select {
			case in <- recvd{r, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var m recvd
		select {
		case m = <-in:
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errDropped) {
				return status.Error(codes.Unavailable, errDropped.Error())
			}
			return status.FromContextError(ctx.Err()).Err()
		}
		if m.err != nil {
			if errors.Is(m.err, io.EOF) {
				wg.Wait()
				if errors.Is(context.Cause(ctx), errDropped) {
					return status.Error(codes.Unavailable, errDropped.Error())
				}
				return nil
			}
			return m.err
		}
		r, place := m.r, order.reserve()
		wg.Go(func() {
			resp, err := g.infer(ctx, r)
			switch {
			case errors.Is(err, errDropped):
				cancel(errDropped)
				order.done(place, nil)
			case err != nil:
				order.done(place, &inferencepb.ModelStreamInferResponse{ErrorMessage: err.Error(),
					InferResponse: &inferencepb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: r.GetModelVersion(), Id: r.GetId()}})
			default:
				order.done(place, &inferencepb.ModelStreamInferResponse{InferResponse: resp})
			}
		})
	}
}
