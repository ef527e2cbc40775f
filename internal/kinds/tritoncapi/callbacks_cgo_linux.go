//go:build linux && cgo

package tritoncapi

// With cgo, Triton's callbacks are the C functions below: a response is
// recorded and its waiter's semaphore posted on Triton's own thread,
// without entering Go. A Go callback from a thread Go did not create
// borrows an M for every call (needm and dropm: signal masks and the
// alternate signal stack set and reset each time) and finds the Go
// function through reflection (purego); at concurrency 1 that was most
// of a small model's time in process. No Triton header is needed: the
// few types are written out here, as tritonserver.h declares them.

/*
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>

typedef void* (*psc_response_delete_fn)(void* response);
typedef void* (*psc_error_new_fn)(int code, const char* msg);

static psc_response_delete_fn psc_response_delete;
static psc_error_new_fn psc_error_new;
static int64_t psc_live_buffers;
static int64_t psc_live_requests;

static void psc_init(uintptr_t response_delete, uintptr_t error_new) {
	psc_response_delete = (psc_response_delete_fn)response_delete;
	psc_error_new = (psc_error_new_fn)error_new;
}

static int64_t psc_buffers(void) { return __atomic_load_n(&psc_live_buffers, __ATOMIC_SEQ_CST); }
static int64_t psc_requests(void) { return __atomic_load_n(&psc_live_requests, __ATOMIC_SEQ_CST); }
static void psc_add_requests(int64_t n) { __atomic_add_fetch(&psc_live_requests, n, __ATOMIC_SEQ_CST); }

// TRITONSERVER_ResponseAllocatorAllocFn_t: outputs in CPU memory from
// malloc, freed by psc_release_buffer when the response is deleted.
static void* psc_alloc(void* allocator, const char* name, size_t byte_size, int32_t memory_type,
	int64_t memory_type_id, void* userp, void** buffer, void** buffer_userp,
	int32_t* actual_memory_type, int64_t* actual_memory_type_id) {
	*buffer_userp = NULL;
	*actual_memory_type = 0; // TRITONSERVER_MEMORY_CPU
	*actual_memory_type_id = 0;
	if (byte_size == 0) {
		*buffer = NULL;
		return NULL;
	}
	void* p = malloc(byte_size);
	if (p == NULL) {
		return psc_error_new(1, "perfscen: out of memory for an output buffer"); // TRITONSERVER_ERROR_INTERNAL
	}
	__atomic_add_fetch(&psc_live_buffers, 1, __ATOMIC_SEQ_CST);
	*buffer = p;
	return NULL;
}

// TRITONSERVER_ResponseAllocatorReleaseFn_t.
static void* psc_release_buffer(void* allocator, void* buffer, void* buffer_userp, size_t byte_size,
	int32_t memory_type, int64_t memory_type_id) {
	if (buffer != NULL) {
		free(buffer);
		__atomic_sub_fetch(&psc_live_buffers, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

// One request in flight: its responses until the waiter takes them. Two
// references: Triton's until the final response, the waiter's until it
// finishes or abandons the request; the last one frees it.
typedef struct {
	pthread_mutex_t mu;
	sem_t* sem;
	int64_t* owner_live;
	uintptr_t* ptrs;
	int32_t* finals;
	size_t n, cap;
	int final_seen; // kept even when out of memory to record the response
	int abandoned;
	int refs;
} psc_inflight;

static uintptr_t psc_new(uintptr_t sem, uintptr_t owner_live) {
	psc_inflight* f = calloc(1, sizeof *f);
	if (f == NULL) {
		return 0;
	}
	pthread_mutex_init(&f->mu, NULL);
	f->sem = (sem_t*)sem;
	f->owner_live = (int64_t*)owner_live;
	f->refs = 2;
	return (uintptr_t)f;
}

static void psc_free(psc_inflight* f) {
	pthread_mutex_destroy(&f->mu);
	free(f->ptrs);
	free(f->finals);
	free(f);
}

static int psc_push(psc_inflight* f, void* resp, int final) {
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 4;
		uintptr_t* p = realloc(f->ptrs, cap * sizeof *p);
		if (p == NULL) {
			return 0;
		}
		f->ptrs = p;
		int32_t* q = realloc(f->finals, cap * sizeof *q);
		if (q == NULL) {
			return 0;
		}
		f->finals = q;
		f->cap = cap;
	}
	f->ptrs[f->n] = (uintptr_t)resp;
	f->finals[f->n] = final;
	f->n++;
	return 1;
}

// TRITONSERVER_InferenceResponseCompleteFn_t.
static void psc_response(void* resp, uint32_t flags, void* userp) {
	psc_inflight* f = userp;
	int final = (flags & 1) != 0; // TRITONSERVER_RESPONSE_COMPLETE_FINAL
	sem_t* sem = f->sem;
	int64_t* live = f->owner_live;
	pthread_mutex_lock(&f->mu);
	int abandoned = f->abandoned;
	int kept = !abandoned && psc_push(f, resp, final);
	if (final) {
		f->final_seen = 1;
	}
	int left = final ? --f->refs : f->refs;
	pthread_mutex_unlock(&f->mu);
	if (!kept && resp != NULL) {
		psc_response_delete(resp);
	}
	if (final) {
		__atomic_sub_fetch(live, 1, __ATOMIC_SEQ_CST);
		__atomic_sub_fetch(&psc_live_requests, 1, __ATOMIC_SEQ_CST);
	}
	if (!abandoned) {
		sem_post(sem);
	}
	if (left == 0) {
		psc_free(f);
	}
}

// psc_take moves up to max responses into ptrs and finals and returns how
// many; *final_seen says whether the final response came (it may have been
// dropped for want of memory, and still ends the request).
static size_t psc_take(uintptr_t h, uintptr_t* ptrs, int32_t* finals, size_t max, int* final_seen) {
	psc_inflight* f = (psc_inflight*)h;
	pthread_mutex_lock(&f->mu);
	size_t k = f->n < max ? f->n : max;
	for (size_t i = 0; i < k; i++) {
		ptrs[i] = f->ptrs[i];
		finals[i] = f->finals[i];
	}
	for (size_t i = k; i < f->n; i++) {
		f->ptrs[i - k] = f->ptrs[i];
		f->finals[i - k] = f->finals[i];
	}
	f->n -= k;
	*final_seen = f->final_seen && f->n == 0;
	pthread_mutex_unlock(&f->mu);
	return k;
}

// psc_abandon stops waiting: responses taken no more are deleted, now
// and as they come; the waiter's reference is dropped.
static void psc_abandon(uintptr_t h) {
	psc_inflight* f = (psc_inflight*)h;
	pthread_mutex_lock(&f->mu);
	f->abandoned = 1;
	uintptr_t* pending = f->ptrs;
	size_t n = f->n;
	f->ptrs = NULL;
	f->n = 0;
	f->cap = 0;
	free(f->finals);
	f->finals = NULL;
	int left = --f->refs;
	pthread_mutex_unlock(&f->mu);
	for (size_t i = 0; i < n; i++) {
		if (pending[i] != 0) {
			psc_response_delete((void*)pending[i]);
		}
	}
	free(pending);
	if (left == 0) {
		psc_free(f);
	}
}

// psc_forget drops both references of a request Triton never took.
static void psc_forget(uintptr_t h) { psc_free((psc_inflight*)h); }

// psc_finish drops the waiter's reference after the final response.
static void psc_finish(uintptr_t h) {
	psc_inflight* f = (psc_inflight*)h;
	pthread_mutex_lock(&f->mu);
	int left = --f->refs;
	pthread_mutex_unlock(&f->mu);
	if (left == 0) {
		psc_free(f);
	}
}

static uintptr_t psc_alloc_fn(void) { return (uintptr_t)psc_alloc; }
static uintptr_t psc_release_fn(void) { return (uintptr_t)psc_release_buffer; }
static uintptr_t psc_response_fn(void) { return (uintptr_t)psc_response; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

var (
	cbOnce                         sync.Once
	cbAlloc, cbRelease, cbResponse uintptr
	// cbRequestRelease is TRITONSERVER_InferenceRequestDelete itself: a
	// release callback gets (request, flags, userp), and a function of
	// (request) called with them deletes the request. The request's
	// inputs are not read after its final response, which the owner
	// waits for.
	cbRequestRelease uintptr
)

func makeCallbacks(l *lib) {
	cbOnce.Do(func() {
		theLib = l
		C.psc_init(C.uintptr_t(l.fn["TRITONSERVER_InferenceResponseDelete"]), C.uintptr_t(l.fn["TRITONSERVER_ErrorNew"]))
		cbAlloc = uintptr(C.psc_alloc_fn())
		cbRelease = uintptr(C.psc_release_fn())
		cbResponse = uintptr(C.psc_response_fn())
		cbRequestRelease = l.fn["TRITONSERVER_InferenceRequestDelete"]
	})
}

// newLiveCounter is a request count in C memory, which the response
// callback decrements. It is never freed: a point whose model hangs
// leaves requests that may still finish after the point is gone.
func newLiveCounter() *int64 {
	p := C.calloc(1, 8)
	if p == nil {
		panic("tritoncapi: out of memory for a request count")
	}
	return (*int64)(p)
}

func addLiveRequests(n int64) { C.psc_add_requests(C.int64_t(n)) }
func liveRequestCount() int64 { return int64(C.psc_requests()) }
func liveBufferCount() int64  { return int64(C.psc_buffers()) }

// inflight is one request sent with ServerInferAsync, held in C.
type inflight struct {
	h      C.uintptr_t
	closed bool // finished or abandoned: the waiter's reference is gone
	ptrs   [8]C.uintptr_t
	finals [8]C.int32_t
}

func newInflight(sem *semaphore, owner *requestOwner) (*inflight, error) {
	h := C.psc_new(C.uintptr_t(sem.ptr), C.uintptr_t(uintptr(unsafe.Pointer(owner.live))))
	if h == 0 {
		return nil, fmt.Errorf("out of memory for a request")
	}
	return &inflight{h: h}, nil
}

func (f *inflight) userp() uintptr { return uintptr(f.h) }

// cancel forgets a request Triton did not take.
func (f *inflight) cancel() {
	f.closed = true
	C.psc_forget(f.h)
}

// take returns the responses received so far; after the final one it
// returns a final entry even if the response itself could not be kept.
func (f *inflight) take(into []response) []response {
	for {
		var finalSeen C.int
		n := int(C.psc_take(f.h, &f.ptrs[0], &f.finals[0], C.size_t(len(f.ptrs)), &finalSeen))
		for i := 0; i < n; i++ {
			into = append(into, response{ptr: uintptr(f.ptrs[i]), final: f.finals[i] != 0})
		}
		if n < len(f.ptrs) {
			if finalSeen != 0 && (len(into) == 0 || !into[len(into)-1].final) {
				into = append(into, response{final: true})
			}
			return into
		}
	}
}

// abandon stops waiting: responses already received and later ones are
// deleted (the final one still ends the request for its owner).
func (f *inflight) abandon() {
	if !f.closed {
		f.closed = true
		C.psc_abandon(f.h)
	}
}

// finish ends the waiter's use of f after its final response.
func (f *inflight) finish() {
	if !f.closed {
		f.closed = true
		C.psc_finish(f.h)
	}
}
