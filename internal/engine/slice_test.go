package engine

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"golang.org/x/sys/unix"
)

// threadSliceCounts reads the slice of each of the process's threads:
// how many have the short one and how many threads were read.
func threadSliceCounts(t *testing.T) (short, all int) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue
		}
		all++
		if a.Runtime == uint64(shortSlice) {
			short++
		}
	}
	return short, all
}

// A replay puts every thread of the process on the short slice while it
// runs, the threads started meanwhile too, and the last replay to end
// gives the default back.
func TestReplayThreadsRunOnAShortSlice(t *testing.T) {
	if a, err := unix.SchedGetAttr(0, 0); err != nil || a.Runtime == 0 {
		t.Skipf("this kernel has no per-thread slice for SCHED_OTHER (sched_getattr: %+v, %v); Linux 6.12 or later has", a, err)
	}
	if short, _ := threadSliceCounts(t); short != 0 {
		t.Fatalf("%d thread(s) on the short slice before any replay", short)
	}
	threadSlices.acquire()
	threadSlices.acquire() // two replays of a mix
	if short, all := threadSliceCounts(t); short != all {
		t.Errorf("during a replay %d of %d threads have the short slice", short, all)
	}
	// A thread the runtime starts meanwhile is cloned from one of them.
	done := make(chan struct{})
	for range 4 {
		go func() {
			ts := unix.NsecToTimespec(int64(20 * time.Millisecond))
			_ = unix.Nanosleep(&ts, nil) // holds its thread: the runtime starts others
			done <- struct{}{}
		}()
	}
	for range 4 {
		<-done
	}
	if short, all := threadSliceCounts(t); short != all {
		t.Errorf("after new threads %d of %d threads have the short slice", short, all)
	}
	threadSlices.release()
	if short, all := threadSliceCounts(t); short != all {
		t.Errorf("one replay of two ended: %d of %d threads kept the short slice", short, all)
	}
	threadSlices.release()
	if short, all := threadSliceCounts(t); short != 0 {
		t.Errorf("after the replays %d of %d threads kept the short slice", short, all)
	}
}

// A precise send is never early: the worker that holds a tick handed
// ahead of time waits for the send's instant. (How late a send may be
// depends on the machine; BenchmarkTraceScheduleError measures it.)
func TestPreciseSendsAreNeverEarly(t *testing.T) {
	const n = 40
	gaps := make([]time.Duration, n)
	for i := range gaps {
		gaps[i] = time.Duration(i%4) * time.Millisecond // bursts and gaps under the hand-off margin
	}
	d := &inputdata.Data{Streams: [][]inputdata.Step{make([]inputdata.Step, n)}, BatchSize: 1}
	offs, _ := flatOffsets(d)
	rp := &recordingPoint{d: d, reply: time.Millisecond, sent: map[int]time.Duration{}}
	pl := &pointLoad{kind: rp, data: d, offsets: offs, seqIDs: new(atomic.Uint64), validateEvery: 1, byTick: true}
	pacer := NewIntervalsPacer(gaps)
	w, _, err := startSession(context.Background(), pl, loadSpec{rate: true, workers: 2, pacer: pacer,
		budget: n, whole: true, precise: true}, time.Now()).wait()
	if err != nil || w == nil || w.n != n {
		t.Fatalf("window %+v, err %v", w, err)
	}
	if len(rp.sent) != n {
		t.Fatalf("%d of %d steps sent", len(rp.sent), n)
	}
	for i := range n {
		if got, due := rp.sent[i], pacer.Due(uint64(i)); got < due {
			t.Errorf("step %d sent at %v, %v before its time %v", i, got, due-got, due)
		}
	}
}
