package engine

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"golang.org/x/sys/unix"
)

// policyPoint answers at once and records the scheduling class of the
// thread each request was sent from.
type policyPoint struct {
	instantPoint
	mu       sync.Mutex
	policies map[uint32]int
}

func (p *policyPoint) NewCaller(context.Context, int) (kinds.Caller, error) {
	return policyCaller{p}, nil
}

type policyCaller struct{ p *policyPoint }

func (c policyCaller) Call(_ context.Context, clock func() time.Duration, _ *kinds.Request, out *kinds.Outcome) {
	out.Sent = clock()
	a, err := unix.SchedGetAttr(0, 0)
	c.p.mu.Lock()
	if err == nil {
		c.p.policies[a.Policy]++
	}
	c.p.mu.Unlock()
	out.Done = out.Sent
}
func (policyCaller) Close() error { return nil }

// replayPolicies replays a 20-request trace (1 ms apart, 30 ms in all)
// with the precise wait and returns the classes its sends were made from
// and the window's schedule wait.
func replayPolicies(t *testing.T) (map[uint32]int, string) {
	t.Helper()
	const n = 20
	gaps := make([]time.Duration, n)
	for i := range gaps {
		gaps[i] = time.Millisecond
	}
	d := &inputdata.Data{Streams: [][]inputdata.Step{make([]inputdata.Step, n)}, BatchSize: 1}
	offs, _ := flatOffsets(d)
	pp := &policyPoint{instantPoint: instantPoint{d}, policies: map[uint32]int{}}
	pl := &pointLoad{kind: pp, data: d, offsets: offs, seqIDs: new(atomic.Uint64), validateEvery: 1, byTick: true}
	w, _, err := startSession(context.Background(), pl, loadSpec{rate: true, workers: 2, pacer: NewIntervalsPacer(gaps),
		budget: n, whole: true, precise: true}, time.Now()).wait()
	if err != nil || w == nil || w.n != n {
		t.Fatalf("replay: window %+v, err %v", w, err)
	}
	m := w.metrics(1, w.end-w.start)
	if m.ScheduleError == nil || m.ScheduleError.Count != n {
		t.Fatalf("schedule error %+v, want %d sends", m.ScheduleError, n)
	}
	return pp.policies, m.ScheduleWait
}

// realtimePermitted says whether this process may put a thread in the
// real-time class, leaving the thread as it was.
func realtimePermitted() bool {
	before, ok := lockRealtime()
	if ok {
		unlockRealtime(before)
	}
	return ok
}

// fifoThreads counts the process's threads in the real-time class.
func fifoThreads(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	n := 0
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if a, err := unix.SchedGetAttr(tid, 0); err == nil && a.Policy == unix.SCHED_FIFO {
			n++
		}
	}
	return n
}

// Where the process may, a replay's sends leave from real-time threads,
// the result says so, and no thread stays real-time after the replay.
func TestReplaySendsFromRealtimeThreads(t *testing.T) {
	if !realtimePermitted() {
		t.Skip("this process may not use real-time threads (root, CAP_SYS_NICE or RLIMIT_RTPRIO ≥ 1 may); the fallback is tested apart")
	}
	if n := fifoThreads(t); n != 0 {
		t.Fatalf("%d real-time thread(s) before the replay", n)
	}
	policies, wait := replayPolicies(t)
	if policies[unix.SCHED_FIFO] != 20 || len(policies) != 1 {
		t.Errorf("sends by class %v, want all 20 from SCHED_FIFO (%d)", policies, unix.SCHED_FIFO)
	}
	if wait != "realtime" {
		t.Errorf("schedule wait %q, want realtime", wait)
	}
	runtime.GC() // the runtime's own threads run meanwhile; none may have inherited the class
	if n := fifoThreads(t); n != 0 {
		t.Errorf("%d real-time thread(s) left after the replay", n)
	}
}

// Where real-time threads are refused, or the process has as many
// real-time workers as it allows, sends leave from ordinary threads and
// the result names the wait they had.
func TestReplayWithoutRealtime(t *testing.T) {
	want := "fair"
	if a, err := unix.SchedGetAttr(0, 0); err == nil && a.Runtime != 0 {
		want = "short-slice" // Linux 6.12 or later: the slice is per thread
	}
	for _, tt := range []struct {
		name  string
		setup func()
	}{
		{"refused", func() { tryRealtime = func() (*unix.SchedAttr, bool) { return nil, false } }},
		{"no free slot", func() { realtimeSlots = make(chan struct{}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(f func() (*unix.SchedAttr, bool), c chan struct{}) { tryRealtime, realtimeSlots = f, c }(tryRealtime, realtimeSlots)
			tt.setup()
			policies, wait := replayPolicies(t)
			if policies[unix.SCHED_NORMAL] != 20 {
				t.Errorf("sends by class %v, want all 20 from SCHED_NORMAL", policies)
			}
			if wait != want {
				t.Errorf("schedule wait %q, want %q", wait, want)
			}
		})
	}
}

// A window reports the least precise wait among its sends, merged
// windows too, and none where nothing was scheduled.
func TestScheduleWaitIsTheWeakest(t *testing.T) {
	a, b := newAcc(0), newAcc(0)
	a.add(&sample{paced: true, wait: waitRealtime})
	a.add(&sample{paced: true, wait: waitRealtime})
	if got := a.metrics(1, time.Second).ScheduleWait; got != "realtime" {
		t.Errorf("all real-time: %q", got)
	}
	b.add(&sample{paced: true, wait: waitShortSlice})
	a.merge(b)
	if got := a.metrics(1, time.Second).ScheduleWait; got != "short-slice" {
		t.Errorf("merged with a short-slice window: %q", got)
	}
	c := newAcc(0)
	c.add(&sample{})
	if got := c.metrics(1, time.Second).ScheduleWait; got != "" {
		t.Errorf("closed loop: %q", got)
	}
}
