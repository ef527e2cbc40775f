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

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// paramFinalResponse marks, on every stream response, whether it is the
// last one for its request, as Triton's stream handler does.
const paramFinalResponse = "triton_final_response"

// ModelStreamInfer serves a bidirectional stream. Requests reach their
// model's queue in the order the stream carries them (the next one is read
// only once the previous one is queued), so a pipelined sequence arrives in
// order; they then run concurrently. Answers of non-decoupled models
// (each carrying its request's id, an error coming back in-stream as
// error_message) leave in request order, as from Triton. A decoupled
// model's responses leave as the model produces them, each marked
// triton_final_response false; the final flag follows as an empty response
// when the request asked for it (triton_enable_empty_final_response). A
// dropped request closes the stream with UNAVAILABLE.
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
	next := make(chan struct{}, 1)
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
			select {
			case <-next:
			case <-ctx.Done():
				return
			}
		}
	}()
	dropped := func() error {
		if errors.Is(context.Cause(ctx), errDropped) {
			return status.Error(codes.Unavailable, errDropped.Error())
		}
		return nil
	}
	for {
		var m recvd
		select {
		case m = <-in:
		case <-ctx.Done():
			if err := dropped(); err != nil {
				return err
			}
			return status.FromContextError(ctx.Err()).Err()
		}
		if m.err != nil {
			if errors.Is(m.err, io.EOF) {
				wg.Wait()
				return dropped()
			}
			return m.err
		}
		r := m.r
		queued := make(chan struct{})
		var once sync.Once
		release := func() { once.Do(func() { close(queued) }) }
		g.streamRequest(ctx, cancel, &wg, order, send, r, release)
		select {
		case <-queued:
		case <-ctx.Done():
		}
		next <- struct{}{}
	}
}

// streamRequest starts one stream request; release is called once it is
// queued at its model (or failed before).
func (g *grpcService) streamRequest(ctx context.Context, cancel context.CancelCauseFunc, wg *sync.WaitGroup,
	order *streamOrder[inferencepb.ModelStreamInferResponse], send func(*inferencepb.ModelStreamInferResponse),
	r *inferencepb.ModelInferRequest, release func()) {
	received := time.Now()
	errResponse := func(err error) *inferencepb.ModelStreamInferResponse {
		return &inferencepb.ModelStreamInferResponse{ErrorMessage: err.Error(),
			InferResponse: finalMark(&inferencepb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: r.GetModelVersion(), Id: r.GetId()}, true)}
	}
	req, err := parseGRPCInfer(r)
	if err == nil {
		req.received, req.queued = received, release
		if m, rerr := g.s.resolve(req.model, req.version); rerr == nil && m.def.decoupled {
			wg.Go(func() {
				defer release()
				g.streamDecoupled(ctx, cancel, m, r, req, send, errResponse)
			})
			return
		}
	}
	place := order.reserve()
	if err != nil {
		release()
		order.done(place, errResponse(err))
		return
	}
	wg.Go(func() {
		defer release()
		resp, err := g.infer(ctx, r, req)
		switch {
		case errors.Is(err, errDropped):
			cancel(errDropped)
			order.done(place, nil)
		case err != nil:
			order.done(place, errResponse(err))
		default:
			order.done(place, &inferencepb.ModelStreamInferResponse{InferResponse: finalMark(resp, true)})
		}
	})
}

func (g *grpcService) streamDecoupled(ctx context.Context, cancel context.CancelCauseFunc, m *loadedModel, r *inferencepb.ModelInferRequest,
	req *inferRequest, send func(*inferencepb.ModelStreamInferResponse), errResponse func(error) *inferencepb.ModelStreamInferResponse) {
	defer func() {
		if p := recover(); p != nil {
			g.s.log.Error("panic in gRPC stream infer", "model", r.GetModelName(), "panic", p)
			send(errResponse(errorf(codeInternal, "internal server error")))
		}
	}()
	err := g.s.inferDecoupled(ctx, m, req, func(outs []inferOutput) {
		send(&inferencepb.ModelStreamInferResponse{InferResponse: finalMark(grpcResponse(r, modelVersion, outs), false)})
	})
	switch {
	case errors.Is(err, errDropped):
		cancel(errDropped)
	case err != nil:
		send(errResponse(err))
	case req.emptyFinal:
		send(&inferencepb.ModelStreamInferResponse{InferResponse: finalMark(
			&inferencepb.ModelInferResponse{ModelName: r.GetModelName(), ModelVersion: r.GetModelVersion(), Id: r.GetId()}, true)})
	}
}

func finalMark(resp *inferencepb.ModelInferResponse, final bool) *inferencepb.ModelInferResponse {
	if resp.Parameters == nil {
		resp.Parameters = map[string]*inferencepb.InferParameter{}
	}
	resp.Parameters[paramFinalResponse] = &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: final}}
	return resp
}
