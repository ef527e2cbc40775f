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
// Where perfscen is built with cgo (make build), the callbacks are C
// (callbacks_cgo_linux.go) and never enter Go on Triton's threads; without
// cgo they are Go functions made callable by purego
// (callbacks_purego_linux.go). Both keep the same books: the responses of
// each request in flight, the requests of each point not yet finished, the
// output buffers not yet released.

// theLib is the library the callbacks and semaphores use; set before any
// callback can run.
var theLib *lib

// response is one TRITONSERVER_InferenceResponse handed to perfscen.
type response struct {
	ptr   uintptr // may be 0 with the final flag (no more responses)
	final bool
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

// wait blocks in sem_timedwait until a post or d has passed; the thread
// is the goroutine's own, blocked in C, so the post wakes it directly.
func (s *semaphore) wait(d time.Duration) {
	t := time.Now().Add(d)
	s.deadline = [2]int64{t.Unix(), int64(t.Nanosecond())}
	purego.SyscallN(theLib.semTimedwait, s.ptr, uintptr(unsafe.Pointer(&s.deadline)))
}

// requestOwner counts the requests of one point whose final response has
// not come yet: until it has, the model may read their inputs, which
// point into the point's data. The count is in memory the callbacks can
// reach (C memory where they are C).
type requestOwner struct {
	live *int64
}

func newRequestOwner() *requestOwner { return &requestOwner{live: newLiveCounter()} }

func (o *requestOwner) add() {
	atomic.AddInt64(o.live, 1)
	addLiveRequests(1)
}

func (o *requestOwner) done() {
	atomic.AddInt64(o.live, -1)
	addLiveRequests(-1)
}

// drainPoll is how often waitDrained looks at the count: it is waited on
// once, when a point closes, and the count is decremented in C.
const drainPoll = time.Millisecond

// waitDrained waits until every request of o had its final response, for
// at most limit, and reports whether they all had.
func (o *requestOwner) waitDrained(limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for atomic.LoadInt64(o.live) != 0 {
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(drainPoll)
	}
	return true
}
