package engine

import (
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A replayed trace must leave each request within a millisecond of its
// timestamp, and an LLM engine on the same machine (the usual set-up of a
// trace replay on a CI runner) keeps every CPU busy. Linux's fair
// scheduler (EEVDF, 6.6 and later) lets a thread that wakes up wait for
// the running thread's time slice, 1.5–3 ms on a 2-core machine: with two
// busy loops beside it, the send-time error's p99 was 2.8–4.5 ms whatever
// the wait. A thread that asks for a short slice (sched_setattr's
// sched_runtime, honoured for SCHED_OTHER since Linux 6.12, no privilege
// needed) gets an early deadline, and a woken one preempts the running
// thread at once: the same replay's p99 fell to 36–60 µs. Its share of the
// CPU does not change, only how it is cut.
//
// The slice is per thread and Go moves goroutines between threads, so a
// replay asks for it on all of the process's threads, again each second
// (the runtime starts threads as it needs them), and gives the default
// back when the replay ends. On an older kernel, or where the call is
// refused, nothing changes and the schedule error shows it.

// shortSlice is the slice asked for: the kernel's minimum.
const shortSlice = 100 * time.Microsecond

// sliceRefresh is how often the short slice is asked for again.
const sliceRefresh = time.Second

// slicer holds the process's threads on a short slice while any replay
// runs (points of a mix may replay at once).
type slicer struct {
	mu    sync.Mutex
	users int
	last  time.Time
	ok    bool // the kernel took the short slice
}

var threadSlices slicer

// acquire starts a replay's use of the short slice.
func (s *slicer) acquire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users++
	s.ok = setThreadSlices(shortSlice)
	s.last = time.Now()
}

// held says whether a replay runs and the kernel took its short slice.
func (s *slicer) held() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users > 0 && s.ok
}

// refresh asks for the short slice again on threads started since, at
// most once per sliceRefresh.
func (s *slicer) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users > 0 && time.Since(s.last) >= sliceRefresh {
		setThreadSlices(shortSlice)
		s.last = time.Now()
	}
}

// release ends a replay's use; the last one gives back the default slice.
func (s *slicer) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users == 0 {
		setThreadSlices(0)
	}
}

// setThreadSlices sets the time slice of every thread of the process (0:
// the kernel's default), keeping each thread's policy and nice value, and
// says whether any thread took it. A thread that refuses keeps its slice:
// the schedule error shows it.
func setThreadSlices(slice time.Duration) (ok bool) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil || a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH {
			continue // gone, or a policy the slice does not apply to
		}
		a.Runtime = uint64(slice)
		a.Flags = 0
		if unix.SchedSetAttr(tid, a, 0) != nil {
			continue
		}
		// A kernel before 6.12 accepts the call and keeps its own slice.
		if b, err := unix.SchedGetAttr(tid, 0); err == nil && (slice == 0 || b.Runtime == uint64(slice)) {
			ok = true
		}
	}
	return ok
}
