//go:build linux

package tritoncapi

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Triton calls back from its own threads: to allocate an output buffer,
// to release it, to hand over a response, and to give back a request.
// The callbacks are made once per process (callback slots are never
// freed) and find the request they concern by a number passed as their
// user pointer, never a Go pointer.

var (
	cbOnce                                           sync.Once
	cbAlloc, cbRelease, cbResponse, cbRequestRelease uintptr
	theLib                                           *lib     // set before any callback can run
	inflights                                        sync.Map // uintptr id -> *inflight
	nextInflight                                     atomic.Uintptr
	liveBuffers                                      atomic.Int64 // output buffers not yet released
)

func makeCallbacks(l *lib) {
	cbOnce.Do(func() {
		theLib = l
		cbAlloc = purego.NewCallback(allocFn)
		cbRelease = purego.NewCallback(releaseFn)
		cbResponse = purego.NewCallback(responseFn)
		cbRequestRelease = purego.NewCallback(requestReleaseFn)
	})
}

// allocFn is TRITONSERVER_ResponseAllocatorAllocFn_t: every output lives
// in CPU memory from libc's malloc, freed by releaseFn when the response
// is deleted.
func allocFn(_ uintptr, _ uintptr, byteSize uintptr, _ int32, _ int64, _ uintptr,
	buffer *uintptr, bufferUserp *uintptr, actualType *int32, actualID *int64) uintptr {
	*bufferUserp = 0
	*actualType, *actualID = memoryCPU, 0
	if byteSize == 0 {
		*buffer = 0
		return 0
	}
	p, _, _ := purego.SyscallN(theLib.malloc, byteSize)
	if p == 0 {
		msg := cstr("perfscen: out of memory for an output buffer")
		return theLib.call("TRITONSERVER_ErrorNew", codeInternal, uintptr(unsafe.Pointer(&msg[0])))
	}
	liveBuffers.Add(1)
	*buffer = p
	return 0
}

// releaseFn is TRITONSERVER_ResponseAllocatorReleaseFn_t.
func releaseFn(_ uintptr, buffer uintptr, _ uintptr, _ uintptr, _ int32, _ int64) uintptr {
	if buffer != 0 {
		purego.SyscallN(theLib.free, buffer)
		liveBuffers.Add(-1)
	}
	return 0
}

// response is one TRITONSERVER_InferenceResponse handed to perfscen.
type response struct {
	ptr   uintptr // may be 0 with the final flag (no more responses)
	final bool
}

// inflight is one request sent with ServerInferAsync: its responses, in
// the order they came, until the final one.
type inflight struct {
	id     uintptr
	signal chan struct{} // one token per batch of new responses

	mu        sync.Mutex
	resps     []response
	abandoned bool // the caller stopped waiting: responses are deleted as they come
}

func newInflight() *inflight {
	f := &inflight{id: nextInflight.Add(1), signal: make(chan struct{}, 1)}
	inflights.Store(f.id, f)
	return f
}

// take returns the responses received so far.
func (f *inflight) take(into []response) []response {
	f.mu.Lock()
	defer f.mu.Unlock()
	into = append(into, f.resps...)
	f.resps = f.resps[:0]
	return into
}

// abandon stops waiting: responses already received and later ones are
// deleted.
func (f *inflight) abandon() {
	f.mu.Lock()
	f.abandoned = true
	pending := f.resps
	f.resps = nil
	f.mu.Unlock()
	for _, r := range pending {
		if r.ptr != 0 {
			theLib.call("TRITONSERVER_InferenceResponseDelete", r.ptr)
		}
		if r.final {
			inflights.Delete(f.id)
		}
	}
}

// responseFn is TRITONSERVER_InferenceResponseCompleteFn_t.
func responseFn(resp uintptr, flags uint32, userp uintptr) {
	v, ok := inflights.Load(userp)
	if !ok {
		if resp != 0 {
			theLib.call("TRITONSERVER_InferenceResponseDelete", resp)
		}
		return
	}
	f := v.(*inflight)
	final := flags&responseCompleteFinal != 0
	f.mu.Lock()
	if f.abandoned {
		f.mu.Unlock()
		if resp != 0 {
			theLib.call("TRITONSERVER_InferenceResponseDelete", resp)
		}
		if final {
			inflights.Delete(f.id)
		}
		return
	}
	f.resps = append(f.resps, response{ptr: resp, final: final})
	f.mu.Unlock()
	if final {
		inflights.Delete(f.id)
	}
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

// liveRequests counts request objects Triton has not given back yet.
var liveRequests atomic.Int64

// owners maps the release callback's user pointer to what must hear of a
// request's release (the point whose input data it reads).
var owners sync.Map // uintptr -> *requestOwner

// requestOwner counts the requests of one point that Triton still holds:
// their inputs point into the point's data, which must outlive them.
type requestOwner struct {
	id   uintptr
	mu   sync.Mutex
	live int
	idle chan struct{} // closed and replaced whenever live drops to 0
}

var nextOwner atomic.Uintptr

func newRequestOwner() *requestOwner {
	o := &requestOwner{id: nextOwner.Add(1), idle: make(chan struct{})}
	close(o.idle)
	owners.Store(o.id, o)
	return o
}

func (o *requestOwner) add() {
	o.mu.Lock()
	if o.live == 0 {
		o.idle = make(chan struct{})
	}
	o.live++
	o.mu.Unlock()
	liveRequests.Add(1)
}

func (o *requestOwner) done() {
	o.mu.Lock()
	o.live--
	if o.live == 0 {
		close(o.idle)
	}
	o.mu.Unlock()
	liveRequests.Add(-1)
}

// drained is closed once no request of o is held by Triton.
func (o *requestOwner) drained() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.idle
}

func (o *requestOwner) forget() { owners.Delete(o.id) }

// requestReleaseFn is TRITONSERVER_InferenceRequestReleaseFn_t: Triton
// gives the request back once done with it and its inputs.
func requestReleaseFn(req uintptr, flags uint32, userp uintptr) {
	if flags&requestReleaseAll == 0 {
		return
	}
	theLib.call("TRITONSERVER_InferenceRequestDelete", req)
	if v, ok := owners.Load(userp); ok {
		v.(*requestOwner).done()
	} else {
		liveRequests.Add(-1)
	}
}
