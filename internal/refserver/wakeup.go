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
// its own with a timer slack of 1 ns, in nanosleep calls of at most
// fineStep until that deadline, and wakes its waiters. The kernel's
// high-resolution timers wake it within a few tens of microseconds; the
// runtime's timers cannot: they round up to 1 ms however short.
//
// It used to yield in a loop (runtime.Gosched) for the last 0.3–1.3 ms
// instead: 0.9 ms of CPU per sleep. That made the delay model part
// CPU-bound, which a sleep-bound model is not. On a busy machine the
// spinning thread was preempted and waited in the run queue like a model
// that computes (the server's measured run-queue delay per inference rose
// tenfold while its requests, the spin absorbing the waits, did not move),
// and the server shared the machine's CPUs with its load generator for
// nothing. A nanosleep costs a few microseconds of CPU per wake-up, and a
// wake-up that the machine delays delays the request, as it would in a
// real server that sleeps (BenchmarkSleepOvershoot reports both).
const spinMargin = 500 * time.Microsecond

// fineStep is the longest nanosleep of the fine wait: a deadline earlier
// than the one waited for, arriving meanwhile, is seen within it.
const fineStep = 100 * time.Microsecond

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
}

func init() { wakeups.kick = make(chan struct{}, 1) }

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
		wakeups.mu.Unlock()

		// The coarse timer rounds up to the next millisecond, so ask for
		// whole milliseconds that still end spinMargin early.
		coarse := (left - spinMargin).Truncate(time.Millisecond)
		if coarse <= 0 {
			fineSleep(min(left, fineStep))
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

// fineThread locks the calling goroutine to its OS thread and sets that
// thread's timer slack to 1 ns, so that a nanosleep ends when asked rather
// than up to the default 50 µs later; the returned function restores the
// slack and unlocks. Without prctl (never on Linux) the sleeps are only
// less exact.
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

// fineSleep blocks the thread for d in the kernel. A signal (the runtime
// preempts with SIGURG) ends it early; the caller's loop sleeps again.
func fineSleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.Nanosleep(&ts, nil)
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
