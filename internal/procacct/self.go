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
//
// Its readings do not split the wait by cause (HavePreempt is false): a
// model instance's thread is on its requests' path by construction, so
// its wait after a wake-up (its sleep ended, a request arrived) delays a
// request as much as its wait after a preemption. The split is for a
// whole process, whose idle threads' wake-ups are off the path.
type Threads struct {
	root  string
	mu    sync.Mutex
	model map[string]*modelThreads
	// withInstr opens instruction counters on each model's threads.
	withInstr bool
}

type modelThreads struct {
	// live are the joined threads with their counters when they joined.
	live map[int]threadTimes
	// done holds the time of threads that left.
	done       threadTimes
	inferences uint64
	instr      *instructions // nil without counters
	split      cpuSplit      // the model's CPU time by CPU (SampleCPUs)
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
	m.live[tid] = start
	t.mu.Unlock()
	return func() {
		end, ok := t.times(tid)
		t.mu.Lock()
		if s, still := m.live[tid]; still {
			delete(m.live, tid)
			if ok && end.run >= s.run && end.wait >= s.wait {
				m.done.run += end.run - s.run
				m.done.wait += end.wait - s.wait
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
		m = &modelThreads{live: map[int]threadTimes{}}
		if t.withInstr {
			m.instr = newInstructions()
		}
		t.model[model] = m
	}
	return m
}

// times reads a thread's CPU clock (exact) and its schedstat's run-queue
// delay.
func (t *Threads) times(tid int) (threadTimes, bool) {
	b, err := os.ReadFile(t.root + "/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return threadTimes{}, false
	}
	run, wait, ok := ParseSchedstat(b)
	if cpu, good := ThreadCPUNs(tid); good {
		run = cpu
	}
	return threadTimes{run: run, wait: wait}, ok
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
		return Reading{HaveRunQueue: true, HaveInferences: true}, nil
	}
	r := Reading{CPUNs: m.done.run, RunQueueNs: m.done.wait, HaveRunQueue: true, Inferences: m.inferences, HaveInferences: true,
		CPUNsByCPU: m.split.copyOut()}
	tids := make([]int, 0, len(m.live))
	for tid, start := range m.live {
		if now, ok := t.times(tid); ok && now.run >= start.run && now.wait >= start.wait {
			r.CPUNs += now.run - start.run
			r.RunQueueNs += now.wait - start.wait
		}
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

// SampleCPUs charges each model thread's run time since its last sample
// to the CPU it is on (cpusplit.go).
func (t *Threads) SampleCPUs() {
	// The files are read outside the lock: Count takes it on every
	// inference.
	type seen struct {
		m        *modelThreads
		tid, cpu int
		run      uint64
	}
	t.mu.Lock()
	var list []seen
	for _, m := range t.model {
		for tid := range m.live {
			list = append(list, seen{m: m, tid: tid})
		}
	}
	t.mu.Unlock()
	kept := list[:0]
	for _, s := range list {
		var ok bool
		if s.run, s.cpu, ok = threadRunCPU(t.root + "/" + strconv.Itoa(s.tid)); ok {
			kept = append(kept, s)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	present := map[*modelThreads]map[string]bool{}
	for _, m := range t.model {
		present[m] = map[string]bool{}
	}
	for _, s := range kept {
		key := strconv.Itoa(s.tid)
		if present[s.m] == nil {
			continue // the model's registry is gone
		}
		present[s.m][key] = true
		s.m.split.observe(key, s.run, s.cpu)
	}
	for m, p := range present {
		m.split.keep(p)
	}
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
