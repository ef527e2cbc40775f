//go:build linux

package tritoncapi

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// protocolCAPI names the C API in errors.
const protocolCAPI plan.Protocol = "c_api"

// dataTypes are TRITONSERVER_DataType's values, by name.
var dataTypes = map[tensor.DataType]uintptr{
	tensor.BOOL: 1, tensor.UINT8: 2, tensor.UINT16: 3, tensor.UINT32: 4, tensor.UINT64: 5,
	tensor.INT8: 6, tensor.INT16: 7, tensor.INT32: 8, tensor.INT64: 9, tensor.FP16: 10,
	tensor.FP32: 11, tensor.FP64: 12, tensor.BYTES: 13, tensor.BF16: 14,
}

var dataTypeNames = func() map[int32]tensor.DataType {
	m := map[int32]tensor.DataType{}
	for k, v := range dataTypes {
		m[int32(v)] = k
	}
	return m
}()

// input is one step input, ready to hand to the C API: names as C
// strings, the data pinned for the point's life.
type input struct {
	name  []byte
	dtype uintptr
	shape []int64
	base  unsafe.Pointer
	size  uintptr
}

// point is one plan point's load through the C API.
type point struct {
	s         *server
	m         *model
	name      []byte // model name, C string
	version   uintptr
	data      *inputdata.Data
	inputs    [][]input // by flat step index
	owner     *requestOwner
	pinner    runtime.Pinner
	timeout   time.Duration
	tolerance float64
}

func (s *server) Point(ctx context.Context, pt *plan.Point) (kinds.Point, error) {
	m, ok := s.models[pt.Model]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", pt.Model))
	}
	d, ok := s.data[inputKey(*pt)]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("no input data prepared for point %s", pt.ID))
	}
	p := &point{s: s, m: m, name: cstr(m.plan.Name), version: version(m.plan.Version), data: d,
		owner: newRequestOwner(), timeout: s.plan.Server().Timeout, tolerance: m.plan.FloatTolerance}
	for _, st := range d.Streams {
		for _, step := range st {
			ins := make([]input, len(step.Inputs))
			for k, t := range step.Inputs {
				dt, ok := dataTypes[t.DataType]
				if !ok {
					p.Close()
					return nil, failure.Invalid(fmt.Errorf("input %s: datatype %s has no C API counterpart", t.Name, t.DataType))
				}
				in := input{name: cstr(t.Name), dtype: dt, shape: append([]int64{}, t.Shape...), size: uintptr(len(t.Raw))}
				if len(t.Raw) > 0 {
					// Triton reads the input until it releases the request;
					// the pin keeps the bytes where they are until Close.
					p.pinner.Pin(&t.Raw[0])
					in.base = unsafe.Pointer(&t.Raw[0])
				}
				ins[k] = in
			}
			p.inputs = append(p.inputs, ins)
		}
	}
	return p, nil
}

func (p *point) Data() *inputdata.Data { return p.data }

// Stats reads the model's cumulative statistics from the server.
func (p *point) Stats(ctx context.Context) (kinds.Counters, error) {
	b, err := p.s.ts.statistics(p.m.plan.Name, p.m.plan.Version)
	if err != nil {
		return kinds.Counters{}, err
	}
	return countersFromJSON(b, p.m.plan.Name, p.m.plan.Version)
}

// ModelVersion says which version Triton served the point's requests
// with when the scenario named none (kinds.Versioned).
func (p *point) ModelVersion(context.Context) (string, bool) {
	b, err := p.s.ts.statistics(p.m.plan.Name, "")
	if err != nil {
		return "", false
	}
	vs := versionsServed(b, p.m.plan.Name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.Join(vs, ","), true
}

// waitSlice is how long a caller sleeps in C before it looks at its
// context again.
const waitSlice = 50 * time.Millisecond

// closeWait bounds the wait for requests abandoned at the drain deadline.
const closeWait = 30 * time.Second

// Close waits for the final response of every request of the point, up
// to closeWait, and hands the pins of its inputs to the server, which
// releases them once Triton is stopped: Triton keeps a request's inputs in
// use until it releases the request (its release callback, which may come
// after the final response), so they are never unpinned, let alone freed,
// while a request may be held. Before, the pins were dropped with the
// point when Triton still held requests, and the dropped runtime.Pinner's
// finalizer panicked ("found leaking pinned pointer"), ending the process
// with exit 2.
func (p *point) Close() error {
	var err error
	if !p.owner.waitDrained(closeWait) {
		err = failure.Env(fmt.Errorf("model %s: Triton still held requests %s after the point ended (a hung model?); their inputs stay pinned until the server stops", p.m.plan.Name, closeWait))
	}
	p.s.keepPinned(&p.pinner)
	return err
}

// caller sends one worker's requests; one goroutine owns it.
type caller struct {
	p     *point
	l     *lib
	sem   *semaphore
	resps []response
	out   outputParams
}

// outputParams receive TRITONSERVER_InferenceResponseOutput's results; they
// live in the caller (on the heap) so the C side writes into stable memory.
type outputParams struct {
	count     uint32
	name      *byte
	dtype     int32
	shape     *int64
	dims      uint64
	base      unsafe.Pointer
	size      uintptr
	memType   int32
	memTypeID int64
	userp     uintptr
	req       uintptr
}

func (p *point) NewCaller(ctx context.Context, worker int) (kinds.Caller, error) {
	sem, err := getSemaphore()
	if err != nil {
		return nil, err
	}
	return &caller{p: p, l: p.s.ts.l, sem: sem}, nil
}

func (c *caller) Close() error {
	if c.sem != nil {
		putSemaphore(c.sem)
		c.sem = nil
	}
	return nil
}

// Call builds a request for the step, hands it to ServerInferAsync and
// waits for its final response. Sent is stamped before the request is
// built (building is the client's share, as encoding is for HTTP), Wait
// runs from the hand-over to the final response.
func (c *caller) Call(ctx context.Context, clock func() time.Duration, r *kinds.Request, out *kinds.Outcome) {
	p, l := c.p, c.l
	var deadline time.Time
	if p.timeout > 0 {
		// Checked in the wait loop: no timer or context per request.
		deadline = time.Now().Add(p.timeout)
	}
	out.Sent = clock()
	req, err := c.build(r)
	if err != nil {
		out.Done = clock()
		out.Err = err
		return
	}
	f, err := newInflight(c.sem, p.owner)
	if err != nil {
		l.call("TRITONSERVER_InferenceRequestDelete", req)
		out.Done = clock()
		out.Err = serverError("infer", err)
		return
	}
	if err := l.err(l.call("TRITONSERVER_InferenceRequestSetResponseCallback", req, p.s.ts.allocator, 0, cbResponse, f.userp())); err != nil {
		f.cancel()
		l.call("TRITONSERVER_InferenceRequestDelete", req)
		out.Done = clock()
		out.Err = serverError("infer", err)
		return
	}
	p.owner.add()
	handed := clock()
	if err := l.err(l.call("TRITONSERVER_ServerInferAsync", p.s.ts.ptr, req, 0)); err != nil {
		// Triton did not take the request: it stays ours.
		f.cancel()
		l.call("TRITONSERVER_InferenceRequestDelete", req)
		p.owner.done()
		out.Done = clock()
		out.Err = serverError("infer", err)
		return
	}
	keep, err := c.wait(ctx, deadline, f, out, clock)
	f.finish()
	out.Done = clock()
	out.SendRecv, out.Wait = handed-out.Sent, out.Done-handed
	if err != nil {
		out.Err = err
		return
	}
	defer l.call("TRITONSERVER_InferenceResponseDelete", keep)
	if !r.Check || len(r.Step.Expected) == 0 {
		return
	}
	out.Checked = true
	got, err := c.outputs(keep)
	if err != nil {
		out.Mismatch = err.Error()
		return
	}
	out.Mismatch = kinds.CompareTensors(r.Step.Expected, got, p.tolerance)
}

// build makes the request of a step: inputs, sequence flags, release
// callback.
func (c *caller) build(r *kinds.Request) (uintptr, error) {
	p, l := c.p, c.l
	o := &c.out
	if err := l.err(l.call("TRITONSERVER_InferenceRequestNew", uintptr(unsafe.Pointer(&o.req)), p.s.ts.ptr, uintptr(unsafe.Pointer(&p.name[0])), p.version)); err != nil {
		return 0, serverError("infer", err)
	}
	req := o.req
	fail := func(err error) (uintptr, error) {
		l.call("TRITONSERVER_InferenceRequestDelete", req)
		return 0, serverError("infer", err)
	}
	for _, in := range p.inputs[r.Index] {
		var shape uintptr
		if len(in.shape) > 0 {
			shape = uintptr(unsafe.Pointer(&in.shape[0]))
		}
		if err := l.err(l.call("TRITONSERVER_InferenceRequestAddInput", req, uintptr(unsafe.Pointer(&in.name[0])), in.dtype, shape, uintptr(len(in.shape)))); err != nil {
			return fail(err)
		}
		if err := l.err(l.call("TRITONSERVER_InferenceRequestAppendInputData", req, uintptr(unsafe.Pointer(&in.name[0])), uintptr(in.base), in.size, memoryCPU, 0)); err != nil {
			return fail(err)
		}
	}
	if r.Seq != nil {
		var flags uintptr
		if r.Seq.Start {
			flags |= requestFlagSequenceStart
		}
		if r.Seq.End {
			flags |= requestFlagSequenceEnd
		}
		if err := l.err(l.call("TRITONSERVER_InferenceRequestSetCorrelationId", req, uintptr(r.Seq.ID))); err != nil {
			return fail(err)
		}
		if err := l.err(l.call("TRITONSERVER_InferenceRequestSetFlags", req, flags)); err != nil {
			return fail(err)
		}
	}
	if err := l.err(l.call("TRITONSERVER_InferenceRequestSetReleaseCallback", req, cbRequestRelease, 0)); err != nil {
		return fail(err)
	}
	return req, nil
}

// wait collects the responses of f until the final one. It returns the
// last response that carried outputs (the caller deletes it); the others
// are deleted here. Decoupled models answer several times: as for gRPC
// streams, the request completes at the final response, and the first
// response with data is stamped in out.First.
func (c *caller) wait(ctx context.Context, deadline time.Time, f *inflight, out *kinds.Outcome, clock func() time.Duration) (uintptr, error) {
	l := c.l
	var keep uintptr
	var failure error
	drop := func(resp uintptr) {
		if resp != 0 {
			l.call("TRITONSERVER_InferenceResponseDelete", resp)
		}
	}
	for {
		c.resps = f.take(c.resps[:0])
		if len(c.resps) == 0 {
			err := ctx.Err()
			slice := waitSlice
			if !deadline.IsZero() {
				left := time.Until(deadline)
				if left <= 0 && err == nil {
					err = context.DeadlineExceeded
				}
				slice = min(slice, max(left, time.Millisecond))
			}
			if err != nil {
				f.abandon()
				drop(keep)
				return 0, &transport.TransportError{Protocol: protocolCAPI, Op: "infer", Err: err}
			}
			// A bounded wait, so a cancelled context is seen.
			c.sem.wait(slice)
			continue
		}
		final := false
		for _, resp := range c.resps {
			final = final || resp.final
			if resp.ptr == 0 {
				continue
			}
			if e := l.call("TRITONSERVER_InferenceResponseError", resp.ptr); e != 0 {
				if failure == nil {
					failure = serverError("infer", l.errorOf(e))
				}
				drop(resp.ptr)
				continue
			}
			if err := l.err(l.call("TRITONSERVER_InferenceResponseOutputCount", resp.ptr, uintptr(unsafe.Pointer(&c.out.count)))); err != nil {
				drop(resp.ptr)
				continue
			}
			if !resp.final || out.Responses > 0 {
				out.Decoupled = true
			}
			if c.out.count == 0 {
				drop(resp.ptr)
				continue
			}
			if out.Responses == 0 {
				out.First = clock()
			}
			out.Responses++
			drop(keep)
			keep = resp.ptr
		}
		if final {
			if !out.Decoupled {
				out.Responses, out.First = 0, 0
			}
			if failure != nil {
				drop(keep)
				return 0, failure
			}
			if keep == 0 && !out.Decoupled {
				return 0, &transport.ProtocolError{Protocol: protocolCAPI, Op: "infer", Err: fmt.Errorf("no response")}
			}
			return keep, nil
		}
	}
}

// outputs reads a response's outputs as tensors over the response's
// buffers (valid until it is deleted).
func (c *caller) outputs(resp uintptr) ([]tensor.Tensor, error) {
	l, o := c.l, &c.out
	if resp == 0 {
		return nil, nil
	}
	if err := l.err(l.call("TRITONSERVER_InferenceResponseOutputCount", resp, uintptr(unsafe.Pointer(&o.count)))); err != nil {
		return nil, err
	}
	got := make([]tensor.Tensor, 0, o.count)
	for i := uint32(0); i < o.count; i++ {
		err := l.err(l.call("TRITONSERVER_InferenceResponseOutput", resp, uintptr(i),
			uintptr(unsafe.Pointer(&o.name)), uintptr(unsafe.Pointer(&o.dtype)), uintptr(unsafe.Pointer(&o.shape)),
			uintptr(unsafe.Pointer(&o.dims)), uintptr(unsafe.Pointer(&o.base)), uintptr(unsafe.Pointer(&o.size)),
			uintptr(unsafe.Pointer(&o.memType)), uintptr(unsafe.Pointer(&o.memTypeID)), uintptr(unsafe.Pointer(&o.userp))))
		if err != nil {
			return nil, err
		}
		t := tensor.Tensor{Name: goString(o.name), DataType: dataTypeNames[o.dtype]}
		if o.dims > 0 {
			t.Shape = append([]int64{}, unsafe.Slice(o.shape, o.dims)...)
		}
		if o.size > 0 {
			t.Raw = unsafe.Slice((*byte)(o.base), o.size)
		}
		got = append(got, t)
	}
	return got, nil
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// serverError turns a Triton error into the server-answer error every
// kind reports (its code spelt as gRPC's, which Triton's mirror).
func serverError(op string, err error) error {
	te, ok := err.(*Error)
	if !ok {
		return &transport.ServerError{Protocol: protocolCAPI, Op: op, GRPCCode: codes.Unknown, Message: err.Error()}
	}
	code := codes.Unknown
	switch te.Code {
	case codeInternal:
		code = codes.Internal
	case codeNotFound:
		code = codes.NotFound
	case codeInvalidArg:
		code = codes.InvalidArgument
	case codeUnavailable:
		code = codes.Unavailable
	case codeUnsupported:
		code = codes.Unimplemented
	case codeAlreadyExists:
		code = codes.AlreadyExists
	case codeCancelled:
		code = codes.Canceled
	}
	return &transport.ServerError{Protocol: protocolCAPI, Op: op, GRPCCode: code, Message: te.Message}
}
