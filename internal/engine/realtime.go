package engine

import (
	"runtime"

	"github.com/perfscen/perfscen/runner/result"
	"golang.org/x/sys/unix"
)

// A replayed trace's send waits until 120 µs before its instant asleep
// on the kernel's timer (session.go). With the short slice (slice.go)
// a woken thread is usually let in at once, but not always: beside
// Ollama on the same two cores, 0–3 of a 240-request trace's sleeps ended
// 0.4–3 ms late per run, and the p99 was over 1 ms in 7 of 17 runs. A
// thread of the real-time class (SCHED_FIFO) preempts every ordinary
// thread the moment its timer fires: the same replay's p99 stayed at or
// under 0.71 ms in 29 of 29 runs (docs/llm.md).
//
// So where the process may (root, CAP_SYS_NICE, or an RLIMIT_RTPRIO of 1
// or more) each worker of a replay runs on its own thread at SCHED_FIFO
// priority 1, the lowest: it waits, sends and reads its replies there,
// and the thread gets its class back when the worker ends (or, where that
// fails, ends with the worker: a goroutine that exits locked to its
// thread takes the thread along, so no real-time thread goes back to the
// runtime's pool). The CPU a worker uses is the client's share
// either way; what changes is that it does not queue behind the server's
// threads. The kernel's real-time throttling (95% of each second by
// default) bounds what a runaway worker could take, and a worker only
// spins for the last spinMargin. Where the call is refused, the worker
// runs as before on the short slice, and the result says which wait the
// sends had (schedule_wait).

// waitKind is how a replay's sends waited for their instants, from the
// most precise to the least; a window holding several reports the
// least precise.
type waitKind uint8

const (
	waitUnset      waitKind = iota // not a scheduled send
	waitRealtime                   // SCHED_FIFO thread
	waitShortSlice                 // SCHED_OTHER on the short slice
	waitFair                       // the kernel's default slice
)

// String is the name results and reports use.
func (k waitKind) String() string {
	switch k {
	case waitRealtime:
		return result.ScheduleWaitRealtime
	case waitShortSlice:
		return result.ScheduleWaitShortSlice
	case waitFair:
		return result.ScheduleWaitFair
	}
	return ""
}

// weaker is the less precise of two waits (an unset one is no wait).
func (k waitKind) weaker(o waitKind) waitKind { return max(k, o) }

// rtPriority is the real-time priority asked for: the lowest, below
// every real-time thread the system already runs (interrupt threads,
// watchdogs).
const rtPriority = 1

// lockRealtime locks the calling goroutine to its thread and puts the
// thread in the real-time class, returning its attributes before; on
// false nothing changed.
func lockRealtime() (*unix.SchedAttr, bool) {
	runtime.LockOSThread()
	before, err := unix.SchedGetAttr(0, 0)
	if err == nil {
		a := *before
		a.Policy, a.Priority, a.Runtime, a.Flags = unix.SCHED_FIFO, rtPriority, 0, 0
		err = unix.SchedSetAttr(0, &a, 0)
	}
	if err != nil {
		runtime.UnlockOSThread()
		return nil, false
	}
	return before, true
}

// unlockRealtime gives a real-time worker's thread its attributes back
// (with the slice a replay running now asks for) and unlocks it. Where
// that fails the goroutine stays locked, and its thread ends with it
// rather than go back to the runtime as a real-time thread.
func unlockRealtime(before *unix.SchedAttr) {
	a := *before
	a.Flags = 0
	if threadSlices.held() {
		a.Runtime = uint64(shortSlice)
	}
	if unix.SchedSetAttr(0, &a, 0) == nil {
		runtime.UnlockOSThread()
	}
}

// tryRealtime is lockRealtime; a test puts a refusal in its place.
var tryRealtime = lockRealtime

// realtimeSlots bounds the real-time workers of the process. Each holds
// an OS thread of its own for its life, and a replay's pool grows with
// the requests in flight (a slow LLM server: hundreds); a worker past the
// bound waits on the short slice, and the window's schedule_wait says so.
var realtimeSlots = make(chan struct{}, 256)

// replayWait readies a replay worker's thread and says how its sends
// will wait: real-time where permitted and a slot is free, else on the
// short slice if the kernel took it. done is called when the worker ends.
func replayWait() (wait waitKind, done func()) {
	select {
	case realtimeSlots <- struct{}{}:
		if before, ok := tryRealtime(); ok {
			return waitRealtime, func() { unlockRealtime(before); <-realtimeSlots }
		}
		<-realtimeSlots
	default:
	}
	if threadSlices.held() {
		return waitShortSlice, func() {}
	}
	return waitFair, func() {}
}
