package refserver

import (
	"context"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func (g *grpcService) ModelInfer(ctx context.Context, r *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	received := time.Now()
	t := ticketFrom(ctx)
	defer t.pass()
	req, err := parseGRPCInfer(r)
	if err != nil {
		return nil, grpcErr(err)
	}
	req.received = received
	if h := g.s.opts.inferArrived; h != nil {
		h(req)
	}
	if req.seq.active() {
		// A sequence's request reaches its model after the calls that
		// arrived before it on this connection (arrivals).
		if err := t.wait(ctx); err != nil {
			return nil, grpcErr(errorf(codeCancelled, "request cancelled while waiting for the calls before it: %v", err))
		}
		req.queued = t.pass
	} else {
		t.pass()
	}
	resp, err := g.infer(ctx, r, req)
	return resp, grpcErr(err)
}

// infer runs one parsed gRPC request; errors are not yet gRPC statuses.
func (g *grpcService) infer(ctx context.Context, r *inferencepb.ModelInferRequest, req *inferRequest) (resp *inferencepb.ModelInferResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			g.s.log.Error("panic in gRPC infer", "model", r.GetModelName(), "panic", p)
			resp, err = nil, errorf(codeInternal, "internal server error")
		}
	}()
	req.endpoint = "ModelInfer RPC"
	out, err := g.s.infer(ctx, req)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	resp = grpcResponse(r, out.version, out.outputs)
	out.finish(time.Since(t), nil)
	return resp, nil
}

func grpcResponse(r *inferencepb.ModelInferRequest, version string, outputs []inferOutput) *inferencepb.ModelInferResponse {
	resp := &inferencepb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: version, Id: r.GetId()}
	for _, o := range outputs {
		resp.Outputs = append(resp.Outputs, &inferencepb.ModelInferResponse_InferOutputTensor{Name: o.name, Datatype: string(o.dtype), Shape: o.shape})
		// Triton adds one raw_output_contents entry per output, empty for
		// one written to shared memory; clients index the list by output.
		resp.RawOutputContents = append(resp.RawOutputContents, nonNil(o.raw))
	}
	return resp
}

// parseGRPCInfer maps a ModelInferRequest onto an inferRequest: each input
// without contents or shm takes the next raw_input_contents entry.
func parseGRPCInfer(r *inferencepb.ModelInferRequest) (*inferRequest, error) {
	req := &inferRequest{model: r.GetModelName(), version: r.GetModelVersion(), id: r.GetId()}
	if err := grpcRequestParams(r.GetParameters(), req); err != nil {
		return nil, err
	}
	raws := r.GetRawInputContents()
	next := 0
	for _, in := range r.GetInputs() {
		dt, err := tensor.ParseDataType(in.GetDatatype())
		if err != nil {
			return nil, errorf(codeInvalidArg, "input '%s': %v", in.GetName(), err)
		}
		ii := inferInput{name: in.GetName(), dtype: dt, shape: in.GetShape()}
		ref, err := shmParams(kservev2.ParamsFromProto(in.GetParameters()), "input", in.GetName())
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
			ii.decode = func(dt tensor.DataType, _ []int64) ([]byte, error) { return kservev2.ContentsToRaw(dt, contents) }
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
		ref, err := shmParams(kservev2.ParamsFromProto(o.GetParameters()), "output", o.GetName())
		if err != nil {
			return nil, err
		}
		cls := 0
		if c, ok := o.GetParameters()[kservev2.ParamClassification]; ok {
			v, isInt := c.GetParameterChoice().(*inferencepb.InferParameter_Int64Param)
			if !isInt {
				return nil, errorf(codeInvalidArg, "invalid value type for 'classification' parameter, expected int64_param")
			}
			if v.Int64Param <= 0 {
				return nil, errorf(codeInvalidArg, "output '%s': parameter 'classification' must be an integer greater than 0", o.GetName())
			}
			cls = int(v.Int64Param)
		}
		req.outputs = append(req.outputs, outputRequest{name: o.GetName(), shm: ref, classCount: cls})
	}
	return req, nil
}

// nonNil keeps an empty raw_output_contents entry present; proto encodes a
// nil element the same way, but the intent reads plainly here.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
