package kserve

import (
	"context"
	"errors"
	"fmt"
	"github.com/perfscen/perfscen/runner/plan"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/transport"
)

// caller sends one worker's requests; one goroutine owns it.
type caller struct {
	p      *point
	id     int
	reqs   []*client.InferRequest // prepared lazily, by flat step index
	params map[string]any         // sequence parameters, reused
	count  uint64                 // requests sent, for stream ids
	idBuf  []byte

	stream    client.Stream
	streamCtx context.Context
	// endStream cancels the stream's own context: the only way to end a
	// gRPC stream from the client, where CloseSend only half-closes it.
	endStream context.CancelFunc

	// conn is this worker's own connection when the client offers one:
	// the worker's goroutine then does the whole exchange itself.
	conn client.Conn

	outputs   *workerOutputs // this caller's output shm regions, given back at Close
	abandoned bool           // a request was cancelled before its reply came
}

func (p *point) NewCaller(ctx context.Context, worker int) (kinds.Caller, error) {
	c := &caller{p: p, id: worker, streamCtx: ctx, reqs: make([]*client.InferRequest, p.steps)}
	if cc, ok := p.client.(client.ConnClient); ok && p.streamer == nil {
		c.conn = cc.NewConn()
	}
	if p.shm != nil {
		o, err := p.shm.workerOutputs(ctx)
		if err != nil {
			return nil, err
		}
		c.outputs = o
	}
	return c, nil
}

// request returns the prepared request of a step, building it the first
// time this caller meets the step.
func (c *caller) request(r *kinds.Request) *client.InferRequest {
	if req := c.reqs[r.Index]; req != nil {
		return req
	}
	req := &client.InferRequest{Model: c.p.model.Name, Version: c.p.model.Version}
	req.Inputs = make([]client.Input, len(r.Step.Inputs))
	for k, t := range r.Step.Inputs {
		req.Inputs[k] = client.Input{Tensor: t}
		if c.p.shm != nil {
			ref := c.p.shm.inputRef(r.Index, k)
			req.Inputs[k].Tensor.Raw = nil
			req.Inputs[k].Shm = &ref
		}
	}
	if c.outputs != nil {
		req.Outputs = c.outputs.requested
	}
	c.reqs[r.Index] = req
	return req
}

// Call sends the request of a step and, when asked, validates the reply
// after its completion stamp, outside the timed part.
func (c *caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	req := c.request(r)
	req.Parameters = nil
	if r.Seq != nil {
		if c.params == nil {
			c.params = map[string]any{}
		}
		c.params["sequence_id"] = int64(r.Seq.ID)
		c.params["sequence_start"] = r.Seq.Start
		c.params["sequence_end"] = r.Seq.End
		req.Parameters = c.params
	}
	c.count++
	out.Sent = clock()
	resp, err := c.call(ctx, req, out, clock)
	out.Done = clock()
	if err != nil {
		out.Err = err
		if ctx.Err() != nil {
			c.abandoned = true
		}
		return
	}
	out.SendRecv, out.Wait = resp.Timing.SendRecv, resp.Timing.Wait
	if !r.Check || len(r.Step.Expected) == 0 {
		return
	}
	out.Checked = true
	got := resp.Outputs
	if c.outputs != nil {
		got, err = c.outputs.read(resp.Outputs)
		if err != nil {
			out.Mismatch = err.Error()
			return
		}
	}
	out.Mismatch = c.p.compare(r.Step.Expected, got)
}

func (c *caller) call(ctx context.Context, req *client.InferRequest, out *kinds.Outcome, clock func() time.Duration) (*client.InferResponse, error) {
	if c.p.streamer != nil {
		return c.callStream(req, out, clock)
	}
	if c.conn != nil {
		return c.conn.Infer(ctx, req, c.p.timeout)
	}
	if c.p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.p.timeout)
		defer cancel()
	}
	return c.p.client.Infer(ctx, req)
}

// callStream sends on this caller's stream and waits for the final
// response with the same id; responses to earlier requests (whose wait was
// abandoned) are skipped. A decoupled model answers several responses per
// request: as perf_analyzer does, the request completes at the final one,
// and the first response's time is kept in out. The response returned is
// the last that carried outputs. A failed send or a transport failure
// ends the stream so the next call opens another: a stream left open
// would hold its server-side call, and each later failure one more.
func (c *caller) callStream(req *client.InferRequest, out *kinds.Outcome, clock func() time.Duration) (*client.InferResponse, error) {
	if c.stream == nil {
		ctx, cancel := context.WithCancel(c.streamCtx)
		st, err := c.p.streamer.InferStream(ctx)
		if err != nil {
			cancel()
			return nil, err
		}
		c.stream, c.endStream = st, cancel
	}
	c.idBuf = strconv.AppendUint(append(c.idBuf[:0], 'w'), uint64(c.id), 10)
	c.idBuf = strconv.AppendUint(append(c.idBuf, '-'), c.count, 10)
	req.ID = string(c.idBuf)
	if err := c.stream.Send(req); err != nil {
		c.dropStream()
		return nil, err
	}
	// server.timeout bounds the whole streamed request, up to its final
	// response, as it bounds a unary call: a decoupled model that never
	// sends its final response would otherwise hold the worker until the
	// drain, and the point end "unstable" instead of timed out. The only
	// way to stop a Recv is to end the stream.
	var expired atomic.Bool
	if c.p.timeout > 0 {
		end := c.endStream
		timer := time.AfterFunc(c.p.timeout, func() {
			expired.Store(true)
			end()
		})
		defer func() {
			if !timer.Stop() && c.stream != nil {
				c.dropStream() // it fired as the answer came: the stream is ended
			}
		}()
	}
	var last *client.InferResponse
	for {
		resp, err := c.stream.Recv()
		if err != nil && expired.Load() {
			c.dropStream()
			return nil, &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: "infer stream",
				Err: fmt.Errorf("no final response within server.timeout %s: %w", c.p.timeout, context.DeadlineExceeded)}
		}
		if resp != nil && resp.ID != req.ID {
			continue
		}
		var se *transport.ServerError
		if err != nil && !errors.As(err, &se) {
			c.dropStream()
		}
		if err != nil {
			return nil, err
		}
		if len(resp.Outputs) > 0 {
			if out.Responses == 0 {
				out.First = clock()
			}
			out.Responses++
			last = resp
		}
		if !resp.Final() {
			out.Decoupled = true
			continue
		}
		if len(resp.Outputs) == 0 && resp.Parameters[client.ParamFinalResponse] != nil {
			out.Decoupled = true // the empty final response of a decoupled model
		}
		if last == nil {
			last = resp
		}
		return last, nil
	}
}

func (c *caller) Close() error {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
	if c.stream != nil {
		_ = c.stream.CloseSend()
		c.dropStream()
	}
	// The engine closes a caller once its last request completed. A
	// request abandoned at the drain deadline may still be written into
	// the regions by the server: those stay out of reuse (close frees
	// them with the rest).
	if !c.abandoned {
		c.p.shm.release(c.outputs)
	}
	c.outputs = nil
	return nil
}

// dropStream ends the stream, if any; the next call opens another.
func (c *caller) dropStream() {
	if c.endStream != nil {
		c.endStream()
	}
	c.stream, c.endStream = nil, nil
}
