package refserver

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfscen/perfscen/internal/threadacct"
)

// Service times must be exact to tens of microseconds: an injected "3%
// slowdown" of a 10 ms model is 300 µs. A Go timer is not that exact when
// the process is otherwise idle: the runtime then waits in epoll with a
// whole-millisecond timeout, so time.Sleep(10.3ms) takes about 11.2 ms and
// even time.Sleep(50µs) about 1.05 ms (measured on linux/amd64, Go 1.26).
//
// So every service-time wait goes through one shared wake-up goroutine: it
// sleeps on an ordinary timer for a whole number of milliseconds ending at
// least spinMargin before the earliest deadline, then, on an OS thread of
// its own with a timer slack of 1 ns, in one ppoll(2) until that deadline,
// and wakes its waiters. The kernel's high-resolution timers end that wait
// within a few tens of microseconds; the runtime's timers cannot: they
// round up to 1 ms however short. An earlier deadline arriving during the
// ppoll ends it at once through an eventfd.
//
// It used to yield in a loop (runtime.Gosched) for the last 0.3–1.3 ms
// instead: about 1 ms of CPU per sleep. That made the delay model part
// CPU-bound, which a sleep-bound model is not: on a busy machine the
// spinning thread was preempted and waited in the run queue like a model
// that computes (the server's measured run-queue delay per inference rose
// tenfold while its requests, the spin absorbing the waits, did not move),
// and it took CPU from the load generator for nothing. Short nanosleeps
// in a loop had the same fault on a smaller scale: every one of them was
// a wake-up that waited for a CPU. Now a sleep wakes twice, and the second
// wake-up is the request's own, as in a real server that sleeps
// (BenchmarkSleepOvershoot reports the CPU per sleep and the lateness).
const spinMargin = 500 * time.Microsecond

// wakeup is a deadline the shared goroutine closes c at.
type wakeup struct {
	at    time.Time
	c     chan struct{}
	index int // in the heap; -1 once fired or cancelled
}

type wakeupHeap []*wakeup

func (h wakeupHeap) Len() int           { return len(h) }
func (h wakeupHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h wakeupHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *wakeupHeap) Push(x any) {
	w := x.(*wakeup)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *wakeupHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.index = -1
	return w
}

// wakeups is the process-wide set of pending deadlines. Its goroutine runs
// only while some deadline is pending, so an idle server holds none.
var wakeups struct {
	mu      sync.Mutex
	pending wakeupHeap
	running bool
	kick    chan struct{} // buffered 1: an earlier deadline arrived
	// fine is set while the goroutine waits in ppoll for the earliest
	// deadline: an earlier one then writes to efd, which ends the wait.
	fine bool
	efd  int // an eventfd; -1 when the kernel gave none
}

func init() {
	wakeups.kick = make(chan struct{}, 1)
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		fd = -1
	}
	wakeups.efd = fd
}

// preciseAfter returns a channel closed at deadline (within tens of
// microseconds unless the machine is overloaded) and a stop function that
// releases it early; stop is safe to call more than once, also after firing.
func preciseAfter(deadline time.Time) (<-chan struct{}, func()) {
	w := &wakeup{at: deadline, c: make(chan struct{})}
	if !time.Now().Before(deadline) {
		close(w.c)
		w.index = -1
		return w.c, func() {}
	}
	wakeups.mu.Lock()
	heap.Push(&wakeups.pending, w)
	earliest := wakeups.pending[0] == w
	if !wakeups.running {
		wakeups.running = true
		go runWakeups()
	} else if earliest {
		select {
		case wakeups.kick <- struct{}{}:
		default:
		}
		if wakeups.fine {
			kickFine()
		}
	}
	wakeups.mu.Unlock()
	return w.c, func() {
		wakeups.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&wakeups.pending, w.index)
		}
		wakeups.mu.Unlock()
	}
}

// runWakeups fires due deadlines until none is pending. Its thread is the
// server's, not the load generator's: it is left out of perfscen's own
// run-queue wait, the disturbance sentinel (threadacct), as a model's
// thread would be.
func runWakeups() {
	defer threadacct.Exclude()()
	defer fineThread()()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		wakeups.mu.Lock()
		now := time.Now()
		for len(wakeups.pending) > 0 && !now.Before(wakeups.pending[0].at) {
			close(heap.Pop(&wakeups.pending).(*wakeup).c)
		}
		if len(wakeups.pending) == 0 {
			wakeups.running = false
			wakeups.mu.Unlock()
			return
		}
		left := wakeups.pending[0].at.Sub(now)
		// The coarse timer rounds up to the next millisecond, so ask for
		// whole milliseconds that still end spinMargin early.
		coarse := (left - spinMargin).Truncate(time.Millisecond)
		fine := coarse <= 0 && wakeups.efd >= 0
		wakeups.fine = fine
		wakeups.mu.Unlock()
		if fine {
			fineWait(left)
			continue
		}
		if coarse <= 0 {
			// No eventfd (the kernel refused one): yield until the
			// deadline, as before the ppoll.
			runtime.Gosched()
			continue
		}
		if timer == nil {
			timer = time.NewTimer(coarse)
		} else {
			timer.Reset(coarse)
		}
		select {
		case <-timer.C:
		case <-wakeups.kick:
			timer.Stop()
		}
	}
}

// fineThread locks the calling goroutine to its OS thread (threadacct has
// locked it too, for its own reason) and sets that thread's timer slack to
// 1 ns, so that the ppoll ends when asked rather than up to the default
// 50 µs later; the returned function restores the slack and unlocks.
// Without prctl (never on Linux) the waits are only less exact.
func fineThread() func() {
	runtime.LockOSThread()
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err == nil {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	}
	return func() {
		if err == nil {
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0)
		}
		runtime.UnlockOSThread()
	}
}

// fineWait blocks the thread in the kernel for d, or until an earlier
// deadline writes to the eventfd (set under wakeups.mu with fine, so a
// deadline pushed after left was computed always ends the wait). A signal
// (the runtime preempts with SIGURG) ends it early; the caller's loop
// waits again.
func fineWait(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	fds := []unix.PollFd{{Fd: int32(wakeups.efd), Events: unix.POLLIN}}
	if n, _ := unix.Ppoll(fds, &ts, nil); n > 0 {
		var buf [8]byte
		_, _ = unix.Read(wakeups.efd, buf[:])
	}
	wakeups.mu.Lock()
	wakeups.fine = false
	wakeups.mu.Unlock()
}

// kickFine ends a fineWait; called with wakeups.mu held.
func kickFine() {
	one := [8]byte{1}
	_, _ = unix.Write(wakeups.efd, one[:])
}

// afterFunc returns a channel closed at deadline and a stop function that
// releases it early. preciseAfter is the server's; timerAfter is the plain
// one Options.PlainTimers asks for.
type afterFunc func(deadline time.Time) (<-chan struct{}, func())

// timerAfter is afterFunc on an ordinary timer.
func timerAfter(deadline time.Time) (<-chan struct{}, func()) {
	c := make(chan struct{})
	t := time.AfterFunc(time.Until(deadline), func() { close(c) })
	return c, func() { t.Stop() }
}

// sleepUntil waits until deadline or until ctx ends, whichever is first,
// returning ctx's error in the latter case.
func (after afterFunc) sleepUntil(ctx context.Context, deadline time.Time) error {
	c, stop := after(deadline)
	defer stop()
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sleep waits d or until ctx ends; models use it for service time so a
// closing server is not held up by a long delay.
func (after afterFunc) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return after.sleepUntil(ctx, time.Now().Add(d))
}
