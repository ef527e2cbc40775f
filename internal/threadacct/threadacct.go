// Package threadacct keeps the threads of an in-process helper out of the
// process's own CPU accounting. perfscen reads its threads' run-queue
// wait (/proc/self/task/*/schedstat) as the disturbance sentinel: how
// much the machine delayed the client. The embedded reference server runs
// in the same process, and its precise-sleep goroutine spins on a CPU
// ahead of every deadline; under a CPU hog that thread's wait grew with
// the server's own work (a 10% slower model spins 10% longer), so the
// sentinel moved with the change it was meant to judge. Such a goroutine
// runs Excluded: locked to its OS thread, whose time during the span is
// subtracted from the process's.
package threadacct

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

var state struct {
	mu sync.Mutex
	// doneRun, doneWait: time of finished excluded spans.
	doneRun, doneWait uint64
	// active: the threads in an excluded span, with their times at its
	// start.
	active map[int][2]uint64
}

// Exclude locks the calling goroutine to its OS thread and leaves that
// thread's CPU and run-queue time out of Own until done is called (which
// unlocks it). Where the thread's schedstat cannot be read it still
// locks, and excludes nothing.
func Exclude() (done func()) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	start, ok := read(tid)
	if !ok {
		return runtime.UnlockOSThread
	}
	state.mu.Lock()
	if state.active == nil {
		state.active = map[int][2]uint64{}
	}
	state.active[tid] = start
	state.mu.Unlock()
	return func() {
		end, ok := read(tid)
		state.mu.Lock()
		delete(state.active, tid)
		if ok && end[0] >= start[0] && end[1] >= start[1] {
			state.doneRun += end[0] - start[0]
			state.doneWait += end[1] - start[1]
		}
		state.mu.Unlock()
		runtime.UnlockOSThread()
	}
}

// Excluded is the CPU and run-queue time (ns) of every excluded span so
// far, the ongoing ones up to now.
func Excluded() (run, wait uint64) {
	state.mu.Lock()
	defer state.mu.Unlock()
	run, wait = state.doneRun, state.doneWait
	for tid, start := range state.active {
		if now, ok := read(tid); ok && now[0] >= start[0] && now[1] >= start[1] {
			run += now[0] - start[0]
			wait += now[1] - start[1]
		}
	}
	return run, wait
}

// read returns a thread's run and wait times from its schedstat.
func read(tid int) ([2]uint64, bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return [2]uint64{}, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return [2]uint64{}, false
	}
	r, err1 := strconv.ParseUint(f[0], 10, 64)
	w, err2 := strconv.ParseUint(f[1], 10, 64)
	return [2]uint64{r, w}, err1 == nil && err2 == nil
}
