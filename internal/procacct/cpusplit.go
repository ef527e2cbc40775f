package procacct

import (
	"os"
	"strconv"
)

// A vCPU's speed moves on its own: the host's other guests slow one core
// and not another (internal/wakeprobe, cpus.go). The wake-up probe times
// its kernel on each CPU in turn, and a server's CPU time divided by the
// kernel's is only its work where both ran on the same CPU. So the
// accounting also shares a server's CPU time out by CPU: every time the
// probe has run its kernel (about every 100 ms) it samples each thread's
// run time and the CPU it is on, and charges the run time since the
// previous sample to that CPU. A thread that ran on two CPUs in between
// is charged to the one it was last on; a CPU-bound model's thread moves
// rarely, and an idle one has nothing to charge.

// CPUSampler is a Source that can share its CPU time out by CPU; the
// engine calls SampleCPUs after each of the probe's kernel runs.
type CPUSampler interface {
	SampleCPUs()
}

// maxSplitCPU bounds the CPU ids a split keeps.
const maxSplitCPU = 1024

// cpuSplit is one set of threads' CPU time by CPU.
type cpuSplit struct {
	last  map[string]uint64 // each thread's run time at its last sample
	byCPU []uint64
}

// observe charges a thread's run time since its last sample to cpu. A
// thread seen for the first time, or whose run time went backwards (an
// id reused), starts counting from here.
func (s *cpuSplit) observe(key string, run uint64, cpu int) {
	if s.last == nil {
		s.last = map[string]uint64{}
	}
	prev, had := s.last[key]
	s.last[key] = run
	if !had || run < prev || cpu < 0 || cpu >= maxSplitCPU {
		return
	}
	for len(s.byCPU) <= cpu {
		s.byCPU = append(s.byCPU, 0)
	}
	s.byCPU[cpu] += run - prev
}

// keep drops the threads not in present (exited).
func (s *cpuSplit) keep(present map[string]bool) {
	for k := range s.last {
		if !present[k] {
			delete(s.last, k)
		}
	}
}

// copyOut is the cumulative split, for a Reading.
func (s *cpuSplit) copyOut() []uint64 {
	if len(s.byCPU) == 0 {
		return nil
	}
	return append([]uint64(nil), s.byCPU...)
}

// taskFiles are a thread's schedstat and stat, kept open between samples:
// a sample is then one pread a thread, and a second for a thread that
// ran since the last one. BenchmarkProcsSampleCPUs (64 idle threads,
// beside a load of ~5) measured 35 µs a thread opening and reading both
// files every time, 2.4% of a core at one sample every 100 ms; 10 µs
// with them kept open.
type taskFiles struct {
	sched, stat *os.File
}

func (f *taskFiles) close() {
	if f.sched != nil {
		f.sched.Close()
	}
	if f.stat != nil {
		f.stat.Close()
	}
}

// sampleTask charges one thread's run time since its last sample to the
// CPU it is on, through its open files (opened on first use); ok is false
// where they cannot be read (the thread exited).
func (s *cpuSplit) sampleTask(files map[string]*taskFiles, key, dir string, buf []byte) bool {
	f := files[key]
	if f == nil {
		sched, err := os.Open(dir + "/schedstat")
		if err != nil {
			return false
		}
		stat, err := os.Open(dir + "/stat")
		if err != nil {
			sched.Close()
			return false
		}
		f = &taskFiles{sched: sched, stat: stat}
		files[key] = f
	}
	n, _ := f.sched.ReadAt(buf, 0)
	run, _, ok := ParseSchedstat(buf[:n])
	if !ok {
		return false
	}
	if prev, had := s.last[key]; had && run == prev {
		return true // did not run: nothing to charge, no need of its CPU
	}
	n, _ = f.stat.ReadAt(buf, 0)
	cpu, ok := ParseProcessor(buf[:n])
	if !ok {
		return false
	}
	s.observe(key, run, cpu)
	return true
}

// threadRunCPU reads a thread's run time (schedstat, ns) and the CPU it
// last ran on (field 39 of its stat) from its task folder.
func threadRunCPU(dir string) (run uint64, cpu int, ok bool) {
	b, err := os.ReadFile(dir + "/schedstat")
	if err != nil {
		return 0, 0, false
	}
	run, _, ok = ParseSchedstat(b)
	if !ok {
		return 0, 0, false
	}
	st, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return 0, 0, false
	}
	cpu, ok = ParseProcessor(st)
	return run, cpu, ok
}

// ParseProcessor reads the CPU a task last ran on from its /proc stat
// (field 39, "processor").
func ParseProcessor(b []byte) (int, bool) {
	f, ok := statFields(b)
	// statFields starts at field 3 (state): field 39 is f[36].
	if !ok || len(f) < 37 {
		return 0, false
	}
	cpu, err := strconv.Atoi(f[36])
	if err != nil || cpu < 0 {
		return 0, false
	}
	return cpu, true
}
