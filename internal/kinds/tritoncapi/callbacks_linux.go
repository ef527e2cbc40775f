//go:build linux

package tritoncapi

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
	theLib           *lib     // set before any callback can run
	inflights        sync.Map // uintptr id -> *inflight
	nextInflight     atomic.Uintptr
	liveBuffers      atomic.Int64 // output buffers not yet released
)

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

// response is one TRITONSERVER_InferenceResponse handed to perfscen.
type response struct {
	ptr   uintptr // may be 0 with the final flag (no more responses)
	final bool
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

func newInflight(sem *semaphore, owner *requestOwner) *inflight {
	f := &inflight{id: nextInflight.Add(1), sem: sem, owner: owner}
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

// semaphore is a libc sem_t in C memory. A caller keeps one while it
// lives and gives it back to a pool: a response to a request it stopped
// waiting for may still post it, so it is never freed, only reused (an
// extra post is a spurious wake-up, which waits tolerate).
type semaphore struct {
	ptr      uintptr
	deadline [2]int64 // struct timespec for sem_timedwait
}

var semPool sync.Pool

func getSemaphore() (*semaphore, error) {
	if s, ok := semPool.Get().(*semaphore); ok {
		return s, nil
	}
	p, _, _ := purego.SyscallN(theLib.malloc, 64) // sizeof(sem_t) is 32 on Linux
	if p == 0 {
		return nil, fmt.Errorf("allocating a semaphore")
	}
	if r, _, _ := purego.SyscallN(theLib.semInit, p, 0, 0); r != 0 {
		return nil, fmt.Errorf("sem_init failed")
	}
	return &semaphore{ptr: p}, nil
}

func putSemaphore(s *semaphore) { semPool.Put(s) }

func (s *semaphore) post() { purego.SyscallN(theLib.semPost, s.ptr) }

// wait blocks in sem_timedwait until a post or d has passed; the thread
// is the goroutine's own, blocked in C, so the post wakes it directly.
func (s *semaphore) wait(d time.Duration) {
	t := time.Now().Add(d)
	s.deadline = [2]int64{t.Unix(), int64(t.Nanosecond())}
	purego.SyscallN(theLib.semTimedwait, s.ptr, uintptr(unsafe.Pointer(&s.deadline)))
}

// liveRequests counts requests whose final response has not come yet.
var liveRequests atomic.Int64

// requestOwner counts the requests of one point whose final response has
// not come yet: until it has, the model may read their inputs, which
// point into the point's data.
type requestOwner struct {
	mu   sync.Mutex
	live int
	idle chan struct{} // closed and replaced whenever live drops to 0
}

func newRequestOwner() *requestOwner {
	o := &requestOwner{idle: make(chan struct{})}
	close(o.idle)
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

// drained is closed once every request of o had its final response.
func (o *requestOwner) drained() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.idle
}
