package procacct

import "golang.org/x/sys/unix"

// The kernel's CPU-time clocks (clock_gettime with a process or thread
// clock id) say exactly how long a process or thread has run, including
// the slice it is in right now. Its schedstat's run time is brought up to
// date only at scheduler events, so a thread busy when it is read is
// behind by up to a tick (4 ms at HZ=250): a few percent of a window's
// CPU time. A process clock also keeps the time of threads that exited.
//
// Clock ids, from the kernel's posix-cpu-timers: the id's bits 3 and up
// are the complement of the pid or tid, bit 2 marks a thread clock, and
// the low bits pick CPUCLOCK_SCHED (2), the scheduler's exact runtime.
// Another process's clock may be read (clock_gettime of a process clock
// has no permission check); another process's thread clocks may not, so
// for them the process clock is read.
const (
	cpuclockSched     = 2
	cpuclockPerThread = 4
)

func processClock(pid int) int32 { return int32(^uint32(pid)<<3) | cpuclockSched }
func threadClock(tid int) int32 {
	return int32(^uint32(tid)<<3) | cpuclockSched | cpuclockPerThread
}

func readClock(id int32) (uint64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, false
	}
	return uint64(ts.Nano()), true
}

// ProcessCPUNs is process pid's CPU time so far, every thread's, living
// or exited; ok is false when it cannot be read (no such process).
func ProcessCPUNs(pid int) (uint64, bool) { return readClock(processClock(pid)) }

// ThreadCPUNs is thread tid's CPU time, for a thread of this process.
func ThreadCPUNs(tid int) (uint64, bool) { return readClock(threadClock(tid)) }
