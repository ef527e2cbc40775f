package procacct

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Procs accounts the threads of a set of processes on this machine, read
// from /proc: every thread of every listed process, the processes re-listed
// at each Read (a server's worker processes, such as Triton's Python
// backend stubs, come and go with its models).
//
// Each thread's schedstat is cumulative from the thread's birth, and a
// thread that exits takes its counters with it. So Procs keeps each
// thread's last values and adds up differences: a thread seen for the
// first time counts from its birth only when it was born after the
// previous Read (a new worker's whole life lies in the window), and a
// thread that exited between two Reads loses only its last interval.
type Procs struct {
	root string
	what string
	list func() ([]int, error)

	mu sync.Mutex
	// seen holds each thread's last counters, by "pid/tid"; seenCPU each
	// process's last CPU clock reading.
	seen    map[string]threadTimes
	seenCPU map[int]uint64
	// cpuOf reads a process's CPU clock (ProcessCPUNs); nil sums its
	// threads' schedstat run times instead (a /proc that is not this
	// machine's, in tests).
	cpuOf     func(pid int) (uint64, bool)
	known     map[int]bool // processes listed at the previous Read
	lastTicks uint64       // boot-relative clock ticks at the previous Read
	cpu, runq uint64
	// preempt is runq's share that followed preemptions; sawSwitches is
	// set once any thread's switches were read (a /proc without them has
	// no split at all).
	preempt     uint64
	sawSwitches bool
	threads     int
	instr       *instructions
	notes       []string
	// split is the threads' CPU time by CPU (SampleCPUs), read through
	// files kept open between samples.
	split      cpuSplit
	splitFiles map[string]*taskFiles
}

// threadTimes are one thread's cumulative counters: time on a CPU and
// waiting runnable (schedstat), and its voluntary and involuntary context
// switches (status; ok false where they could not be read).
type threadTimes struct {
	run, wait, vol, nonvol uint64
	switches               bool
}

// preemptWait is the part of a thread's wait between two readings that
// followed its preemptions: the wait shared out in proportion to the
// involuntary switches among all its switches; all of it when the thread
// did not switch at all (it waited runnable the whole time). ok is false
// where either reading lacks the switches or they went backwards.
func preemptWait(a, b threadTimes, wait uint64) (ns uint64, ok bool) {
	if !a.switches || !b.switches || b.vol < a.vol || b.nonvol < a.nonvol {
		return 0, false
	}
	v, n := b.vol-a.vol, b.nonvol-a.nonvol
	if v+n == 0 {
		return wait, true
	}
	return uint64(float64(wait) * float64(n) / float64(v+n)), true
}

// NewProcs starts accounting the processes list returns (PIDs), under
// the /proc at root; what says what they are, for notes. The first
// reading is taken here, so threads already running count from now.
// withInstructions opens a hardware instruction counter on each thread
// where the machine allows it; where it does not, Notes says so once.
func NewProcs(root, what string, list func() ([]int, error), withInstructions bool) (*Procs, error) {
	p := &Procs{root: root, what: what, list: list, seen: map[string]threadTimes{}, seenCPU: map[int]uint64{}, known: map[int]bool{}}
	if root == "/proc" {
		p.cpuOf = ProcessCPUNs
	}
	if withInstructions {
		p.instr = newInstructions()
	}
	if _, err := p.read(true); err != nil {
		return nil, err
	}
	return p, nil
}

// Read sums the threads' counters since NewProcs.
func (p *Procs) Read(ctx context.Context, _ string) (Reading, error) {
	return p.read(false)
}

func (p *Procs) read(first bool) (Reading, error) {
	pids, err := p.list()
	if err != nil {
		return Reading{}, err
	}
	if len(pids) == 0 {
		return Reading{}, fmt.Errorf("%s: no process left to measure", p.what)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := uptimeTicks(p.root)
	present := make(map[string]bool, len(p.seen))
	known := make(map[int]bool, len(pids))
	var tids []int
	threads := 0
	for _, pid := range pids {
		known[pid] = true
		// A process not listed before counts from its birth only when it
		// was born after the previous reading.
		newProc := !first && !p.known[pid]
		bornAfter := newProc && p.lastTicks > 0 && startTicks(p.root, pid) >= p.lastTicks
		counts := first || !newProc || bornAfter
		if p.cpuOf != nil {
			if cpu, ok := p.cpuOf(pid); ok {
				last, had := p.seenCPU[pid]
				switch {
				case had && cpu >= last:
					p.cpu += cpu - last
				case first:
				case counts:
					p.cpu += cpu
				}
				p.seenCPU[pid] = cpu
			}
		}
		dir := filepath.Join(p.root, strconv.Itoa(pid), "task")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // exited since the listing
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
			if err != nil {
				continue
			}
			run, wait, ok := ParseSchedstat(b)
			if !ok {
				return Reading{}, fmt.Errorf("%s: %s: unreadable schedstat %q", p.what, filepath.Join(dir, e.Name()), bytes.TrimSpace(b))
			}
			cur := threadTimes{run: run, wait: wait}
			if st, err := os.ReadFile(filepath.Join(dir, e.Name(), "status")); err == nil {
				cur.vol, cur.nonvol, cur.switches = ParseSwitches(st)
				p.sawSwitches = p.sawSwitches || cur.switches
			}
			key := strconv.Itoa(pid) + "/" + e.Name()
			present[key] = true
			threads++
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
			last, had := p.seen[key]
			var dr, dw uint64
			from := threadTimes{switches: true} // from birth
			switch {
			case had && run >= last.run && wait >= last.wait:
				dr, dw, from = run-last.run, wait-last.wait, last
			case had:
				// A new thread with a reused id: count it from its birth.
				dr, dw = run, wait
			case first:
			case counts:
				dr, dw = run, wait
			}
			p.runq += dw
			if pw, ok := preemptWait(from, cur, dw); ok {
				p.preempt += pw
			} else {
				// The split is unknown (a thread that exited between
				// its schedstat and its status): its whole wait counts,
				// as it did before the split, rather than losing the
				// figure for the rest of the run.
				p.preempt += dw
			}
			if p.cpuOf == nil {
				p.cpu += dr
			}
			p.seen[key] = cur
		}
	}
	for k := range p.seen {
		if !present[k] {
			delete(p.seen, k)
		}
	}
	for pid := range p.seenCPU {
		if !known[pid] {
			delete(p.seenCPU, pid)
		}
	}
	p.known, p.lastTicks, p.threads = known, now, threads
	r := Reading{CPUNs: p.cpu, RunQueueNs: p.runq, HaveRunQueue: true, PreemptNs: p.preempt, HavePreempt: p.sawSwitches, Threads: threads,
		CPUNsByCPU: p.split.copyOut()}
	if p.instr != nil {
		r.Instructions, r.HaveInstructions = p.instr.read(tids)
	}
	return r, nil
}

// SampleCPUs charges each thread's run time since its last sample to the
// CPU it is on (cpusplit.go): the processes listed at the last Read, so a
// sample costs two reads a thread and no scan of /proc.
func (p *Procs) SampleCPUs() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.splitFiles == nil {
		p.splitFiles = map[string]*taskFiles{}
	}
	buf := make([]byte, 1024) // a stat line is under 400 bytes
	present := map[string]bool{}
	for pid := range p.known {
		dir := filepath.Join(p.root, strconv.Itoa(pid), "task")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			key := strconv.Itoa(pid) + "/" + e.Name()
			if p.split.sampleTask(p.splitFiles, key, filepath.Join(dir, e.Name()), buf) {
				present[key] = true
			}
		}
	}
	p.split.keep(present)
	for k, f := range p.splitFiles {
		if !present[k] {
			f.close()
			delete(p.splitFiles, k)
		}
	}
}

// PerModel is false: a process's threads serve every model.
func (p *Procs) PerModel() bool { return false }

// Beside is true: the processes run on this machine, apart from perfscen.
func (p *Procs) Beside() bool { return true }

// Describe names what is measured.
func (p *Procs) Describe() string { return p.what }

// Notes say what could not be counted.
func (p *Procs) Notes() []string {
	if p.instr != nil {
		return append(p.notes, p.instr.notes()...)
	}
	return p.notes
}

// Close releases the instruction counters and the sampled threads' files.
func (p *Procs) Close() error {
	if p.instr != nil {
		p.instr.close()
	}
	p.mu.Lock()
	for k, f := range p.splitFiles {
		f.close()
		delete(p.splitFiles, k)
	}
	p.mu.Unlock()
	return nil
}

// ParseSwitches reads a thread's voluntary and involuntary context
// switches from its /proc status.
func ParseSwitches(b []byte) (vol, nonvol uint64, ok bool) {
	var haveV, haveN bool
	for _, line := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		var dst *uint64
		switch k {
		case "voluntary_ctxt_switches":
			dst, haveV = &vol, true
		case "nonvoluntary_ctxt_switches":
			dst, haveN = &nonvol, true
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		*dst = n
	}
	if !haveV || !haveN {
		return 0, 0, false
	}
	return vol, nonvol, true
}

// ParseSchedstat reads a thread's schedstat: time on a CPU (ns), time
// runnable waiting for a CPU (ns), timeslices.
func ParseSchedstat(b []byte) (run, wait uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	run, err1 := strconv.ParseUint(f[0], 10, 64)
	wait, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return run, wait, true
}

// startTicks is a process's start time in clock ticks after boot (field
// 22 of /proc/PID/stat); 0 when unreadable.
func startTicks(root string, pid int) uint64 {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	f, ok := statFields(b)
	if !ok || len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// statFields are the fields of a /proc/PID/stat after the command name
// (which may hold spaces and parentheses): state is the first.
func statFields(b []byte) ([]string, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// clockTicks is USER_HZ, the unit of /proc's process times: 100 on every
// Linux architecture perfscen builds for.
const clockTicks = 100

// uptimeTicks is the time since boot in clock ticks; 0 when unreadable.
func uptimeTicks(root string) uint64 {
	b, err := os.ReadFile(filepath.Join(root, "uptime"))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil || s < 0 {
		return 0
	}
	return uint64(s * clockTicks)
}

// Tree lists pid and its descendants, found by every process's parent
// (/proc/*/stat): the children files need a kernel option not every
// distribution sets.
func Tree(root string, pid int) func() ([]int, error) {
	return func() ([]int, error) {
		if _, err := os.Stat(filepath.Join(root, strconv.Itoa(pid))); err != nil {
			return nil, fmt.Errorf("process %d is gone", pid)
		}
		parents, err := parentsOf(root)
		if err != nil {
			return []int{pid}, nil
		}
		out := []int{pid}
		for i := 0; i < len(out); i++ {
			out = append(out, parents[out[i]]...)
		}
		return out, nil
	}
}

// parentsOf maps each process to its children, from every /proc/PID/stat.
func parentsOf(root string) (map[int][]int, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		f, ok := statFields(b)
		if !ok || len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		kids[ppid] = append(kids[ppid], pid)
	}
	return kids, nil
}

// Cgroup lists the processes of a cgroup (v1 or v2): its cgroup.procs and
// those of every cgroup below it.
func Cgroup(dir string) func() ([]int, error) {
	return func() ([]int, error) {
		var out []int
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					out = append(out, pid)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", dir, err)
		}
		return out, nil
	}
}
