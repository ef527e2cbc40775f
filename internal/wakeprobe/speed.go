package wakeprobe

import (
	"math"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The probe also measures how fast the machine's CPUs run right now. A
// virtual machine's vCPU runs slower when the host gives its core to other
// guests' hyperthreads or lowers its frequency, and then every CPU time
// measured on it grows: a server's CPU time per inference, measured to
// stay put under time-slicing, moved ±25% from window to window beside
// other tenants' builds on these machines, while the ratio of two fixed
// kernels' CPU times on the same thread stayed within ±4%. So every
// speedEvery wake-ups the probe runs one fixed kernel (about 20 µs of
// arithmetic over a 16 KiB buffer, cache resident: it measures the core,
// not the memory) and adds the CPU time it took, read from the thread's
// own CPU clock, which counts the time it ran and nothing else. A window's
// mean is the CPU time one unit of fixed work cost in it; a server's CPU
// time per inference divided by it is its work per inference in those
// units, which the host's moods do not move.
const speedEvery = 10 // every 20 ms at Period: about 0.1% of a core

// kernelLen is the kernel's buffer, in float32s (16 KiB).
const kernelLen = 4096

// kernelRounds is how many passes one kernel run makes over its buffer.
const kernelRounds = 4

// kernelSink keeps the kernel's result alive, so no compiler drops it.
var kernelSink atomic.Uint32

// kernel is the fixed work: multiply-adds over a buffer that stays in the
// first-level cache, with a dependency chain so no compiler can drop it.
func kernel(buf []float32) {
	s := float32(0)
	for r := 0; r < kernelRounds; r++ {
		for i := range buf {
			s = s*0.999 + buf[i]
			buf[i] = s * 0.5
		}
	}
	kernelSink.Store(math.Float32bits(s))
}

// threadCPU is the calling thread's CPU time in ns.
func threadCPU() (uint64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return uint64(ts.Nano()), true
}

// timeKernel runs the kernel once and returns its CPU time in ns.
func timeKernel(buf []float32) (uint64, bool) {
	a, ok := threadCPU()
	if !ok {
		return 0, false
	}
	kernel(buf)
	b, ok := threadCPU()
	if !ok || b < a {
		return 0, false
	}
	return b - a, true
}

// newKernelBuf is the kernel's buffer, filled.
func newKernelBuf() []float32 {
	buf := make([]float32, kernelLen)
	for i := range buf {
		buf[i] = float32(i%97) / 97
	}
	return buf
}
