//go:build linux && !cgo

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
	cbOnce                         sync.Once
	cbAlloc, cbRelease, cbResponse uintptr
	// cbRequestRelease is TRITONSERVER_InferenceRequestDelete itself: a
	// release callback gets (request, flags, userp), and a function of
	// (request) called with them deletes the request, without a trip
	// into Go on Triton's thread. The request's inputs are not read after
	// its final response, which the owner waits for.
	cbRequestRelease uintptr
	inflights        sync.Map // uintptr id -> *inflight
	nextInflight     atomic.Uintptr
	liveBuffers      atomic.Int64 // output buffers not yet released
	liveRequests     atomic.Int64 // requests whose final response has not come
)

func newLiveCounter() *int64       { return new(int64) }
func addLiveRequests(n int64)      { liveRequests.Add(n) }
func liveRequestCount() int64      { return liveRequests.Load() }
func liveBufferCount() int64       { return liveBuffers.Load() }
func (f *inflight) userp() uintptr { return f.id }

// cancel forgets a request Triton did not take.
func (f *inflight) cancel() { inflights.Delete(f.id) }

// finish ends the caller's use of f after its final response.
func (f *inflight) finish() {}

func makeCallbacks(l *lib) {
	cbOnce.Do(func() {
		theLib = l
		cbAlloc = purego.NewCallback(allocFn)
		cbRelease = purego.NewCallback(releaseFn)
		cbResponse = purego.NewCallback(responseFn)
		cbRequestRelease = l.fn["TRITONSERVER_InferenceRequestDelete"]
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

// inflight is one request sent with ServerInferAsync: its responses, in
// the order they came, until the final one.
type inflight struct {
	id    uintptr
	sem   *semaphore // posted once per response
	owner *requestOwner

	mu        sync.Mutex
	resps     []response
	abandoned bool // the caller stopped waiting: responses are deleted as they come
}

func newInflight(sem *semaphore, owner *requestOwner) (*inflight, error) {
	f := &inflight{id: nextInflight.Add(1), sem: sem, owner: owner}
	inflights.Store(f.id, f)
	return f, nil
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
// deleted (the final one still ends the request for its owner).
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
	abandoned := f.abandoned
	if !abandoned {
		f.resps = append(f.resps, response{ptr: resp, final: final})
	}
	f.mu.Unlock()
	if abandoned && resp != 0 {
		theLib.call("TRITONSERVER_InferenceResponseDelete", resp)
	}
	if final {
		inflights.Delete(f.id)
		f.owner.done()
	}
	if !abandoned {
		f.sem.post()
	}
}

// post wakes the semaphore's waiter (from a Go callback).
func (s *semaphore) post() { purego.SyscallN(theLib.semPost, s.ptr) }
