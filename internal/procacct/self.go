package procacct

import (
	"context"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Threads accounts the threads of this process that serve each model:
// the embedded server's model instances, each a goroutine locked to an
// OS thread of its own (as Triton's instances are threads of their own),
// so that the kernel's per-thread counters are that instance's alone. The
// client's threads, and the server's protocol handling, which share Go's
// threads with the client, are not counted: what Threads measures is the
// models' execution.
type Threads struct {
	root  string
	mu    sync.Mutex
	model map[string]*modelThreads
	// withInstr opens instruction counters on each model's threads.
	withInstr bool
}

// liveThread is a joined thread: its counters when it joined and at the
// last reading, and its wait since joining that followed preemptions,
// shared out interval by interval (the switches of one interval say
// nothing of another's wait).
type liveThread struct {
	start, last threadTimes
	preempt     uint64
	noPreempt   bool
}

// advance adds the wait since the last reading that followed preemptions.
func (l *liveThread) advance(now threadTimes) {
	if now.wait > l.last.wait {
		if pw, ok := preemptWait(l.last, now, now.wait-l.last.wait); ok {
			l.preempt += pw
		} else {
			l.noPreempt = true
		}
	}
	l.last = now
}

type modelThreads struct {
	// live are the joined threads.
	live map[int]*liveThread
	// done holds the time of threads that left (run and wait), and
	// donePreempt their wait that followed preemptions; noPreempt is set
	// once a thread's switches could not be read.
	done        threadTimes
	donePreempt uint64
	noPreempt   bool
	inferences  uint64
	instr       *instructions // nil without counters
}

// NewThreads starts an empty registry; withInstructions counts each
// joined thread's instructions where the machine allows it.
func NewThreads(withInstructions bool) *Threads {
	return &Threads{root: "/proc/self/task", model: map[string]*modelThreads{}, withInstr: withInstructions}
}

// Join locks the calling goroutine to its OS thread and counts that
// thread's time for model until leave is called (which unlocks it).
// Where the thread's schedstat cannot be read it still locks and counts
// nothing.
func (t *Threads) Join(model string) (leave func()) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	start, ok := t.times(tid)
	if !ok {
		return runtime.UnlockOSThread
	}
	t.mu.Lock()
	m := t.modelLocked(model)
	m.live[tid] = &liveThread{start: start, last: start}
	t.mu.Unlock()
	return func() {
		end, ok := t.times(tid)
		t.mu.Lock()
		if l, still := m.live[tid]; still {
			delete(m.live, tid)
			if s := l.start; ok && end.run >= s.run && end.wait >= l.last.wait {
				m.done.run += end.run - s.run
				m.done.wait += end.wait - s.wait
				l.advance(end)
				m.donePreempt += l.preempt
				m.noPreempt = m.noPreempt || l.noPreempt
			}
		}
		t.mu.Unlock()
		runtime.UnlockOSThread()
	}
}

// Count adds n inferences to model's tally.
func (t *Threads) Count(model string, n int) {
	t.mu.Lock()
	t.modelLocked(model).inferences += uint64(n)
	t.mu.Unlock()
}

func (t *Threads) modelLocked(model string) *modelThreads {
	m := t.model[model]
	if m == nil {
		m = &modelThreads{live: map[int]*liveThread{}}
		if t.withInstr {
			m.instr = newInstructions()
		}
		t.model[model] = m
	}
	return m
}

// times reads a thread's CPU clock (exact), its schedstat's run-queue
// delay and its context switches.
func (t *Threads) times(tid int) (threadTimes, bool) {
	dir := t.root + "/" + strconv.Itoa(tid)
	b, err := os.ReadFile(dir + "/schedstat")
	if err != nil {
		return threadTimes{}, false
	}
	run, wait, ok := ParseSchedstat(b)
	if cpu, good := ThreadCPUNs(tid); good {
		run = cpu
	}
	tt := threadTimes{run: run, wait: wait}
	if st, err := os.ReadFile(dir + "/status"); err == nil {
		tt.vol, tt.nonvol, tt.switches = ParseSwitches(st)
	}
	return tt, ok
}

// Read returns model's counters: the time of its threads since they
// joined, and its inferences.
func (t *Threads) Read(_ context.Context, model string) (Reading, error) {
	t.mu.Lock()
	m := t.model[model]
	if m == nil {
		// No instance of the model has run yet (a point read before its
		// first request reached the model): it has used no CPU so far.
		// An error here stopped the point's readings for good.
		t.mu.Unlock()
		return Reading{HaveRunQueue: true, HavePreempt: true, HaveInferences: true}, nil
	}
	r := Reading{CPUNs: m.done.run, RunQueueNs: m.done.wait, HaveRunQueue: true, PreemptNs: m.donePreempt, HavePreempt: !m.noPreempt, Inferences: m.inferences, HaveInferences: true}
	tids := make([]int, 0, len(m.live))
	for tid, l := range m.live {
		if now, ok := t.times(tid); ok && now.run >= l.last.run && now.wait >= l.last.wait {
			r.CPUNs += now.run - l.start.run
			r.RunQueueNs += now.wait - l.start.wait
			l.advance(now)
		}
		r.PreemptNs += l.preempt
		r.HavePreempt = r.HavePreempt && !l.noPreempt
		tids = append(tids, tid)
	}
	instr := m.instr
	t.mu.Unlock()
	sort.Ints(tids)
	r.Threads = len(tids)
	if instr != nil {
		r.Instructions, r.HaveInstructions = instr.read(tids)
	}
	return r, nil
}

// PerModel is true: each model's threads are its own.
func (t *Threads) PerModel() bool { return true }

// Beside is false: the threads are perfscen's own.
func (t *Threads) Beside() bool { return false }

// Describe names what is measured.
func (t *Threads) Describe() string {
	return "the embedded server's model instances (one OS thread each; protocol handling, which shares threads with the client, is not counted)"
}

// Notes say what could not be counted: one note, however many models.
func (t *Threads) Notes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.model {
		if m.instr != nil {
			if n := m.instr.notes(); len(n) > 0 {
				return n
			}
		}
	}
	return nil
}

// Close releases the instruction counters.
func (t *Threads) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.model {
		if m.instr != nil {
			m.instr.close()
		}
	}
	return nil
}
