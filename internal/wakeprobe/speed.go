package wakeprobe

import (
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The probe also measures how fast the machine runs inference-shaped work
// right now. A virtual machine's vCPU runs slower when the host gives its
// core to other guests' hyperthreads, lowers its frequency or crowds its
// caches, and then every CPU time measured on it grows: a server's CPU
// time per inference, measured to stay put under time-slicing, moved ±25%
// from window to window beside other tenants' builds on these machines.
// So every speedPeriod the probe runs one fixed kernel and adds
// the CPU time it took, read from the thread's own CPU clock, which counts
// the time it ran and nothing else. A window's mean is the CPU time one
// unit of fixed work cost in it; a server's CPU time per inference divided
// by it is its work per inference in those units.
//
// The kernel is a matrix-vector product over 1 MiB of weights, timed on
// its second pass: a dense layer's own access pattern, with its weights
// in the caches beyond the first level, as a model's are between
// requests. An earlier kernel did 20 µs of arithmetic over 16 KiB, in the
// first-level cache, and measured the core alone: on these machines an
// MLP's CPU time per inference moved by up to 1.7× (in both directions,
// for seconds at a time, with or without neighbours of ours) while that
// kernel's time stayed within ±5%, and an unchanged model's work per
// inference false-alarmed against its history. Beside the same moves the
// matrix-vector product's time moved with the model's: between two states
// of the machine, the model's time over it moved 16% where its time over
// the first-level kernel moved 55% (docs/statistics.md). On one thread, in
// turn with a dense model, it follows the model's speed
// (BenchmarkKernelBesideModel measures how closely, on any machine: within
// ±5% on a later CPU under the same name while both moved by a third). A
// server's CPU time per inference holds more than its model's arithmetic,
// though (weights brought back after other work ran on its core, the
// server's own handling), and on that later CPU the kernel ran ~20% faster
// under load while the server's CPU time did not, so the ratio drifted
// more than the CPU time alone. How much of a server's moves the kernel
// cancels depends on the CPU: a history of the ratio holds on the CPU it
// was recorded on (the derived testbed includes the CPU's identity).
//
// The kernel runs every speedPeriod of the monotonic clock, not every so
// many wake-ups: on a busy machine each wake-up comes late, and a count of
// them left a 1 s window at load ~10 with under the minimum of runs, and
// the window without a figure.
const speedPeriod = 100 * time.Millisecond // two ~300 µs passes: about 0.6% of a core

// kernelRows × kernelCols float32s are the kernel's weights (1 MiB, as
// mlp_reference's two layers are: more than a core's second-level cache
// on some CPUs, as much as it on others).
const (
	kernelRows = 1024
	kernelCols = 256
)

// kernelSink keeps the kernel's result alive, so no compiler drops it.
var kernelSink atomic.Uint32

// kernelBuf is the kernel's weights, input and output.
type kernelBuf struct {
	w, x, y []float32
}

// gemv is one pass of the kernel: y = W·x, one accumulator per row, as a
// plain dense layer computes it.
func gemv(k *kernelBuf) {
	for j := 0; j < kernelRows; j++ {
		row := k.w[j*kernelCols : (j+1)*kernelCols]
		s := float32(0)
		for i, v := range row {
			s += v * k.x[i]
		}
		k.y[j] = s
	}
	kernelSink.Store(math.Float32bits(k.y[kernelRows-1]))
}

// speedClock decides when the kernel runs: speedPeriod after its last
// run, however late the wake-ups come.
type speedClock struct{ last uint64 }

// due says whether the kernel runs at a wake-up at now (ns, monotonic),
// and if so counts it as run.
func (c *speedClock) due(now uint64) bool {
	if now-c.last < uint64(speedPeriod) {
		return false
	}
	c.last = now
	return true
}

// monoNs is the monotonic clock in ns (the kernel's, not Go's: the probe
// runs on its own thread, outside any fake clock).
func monoNs() (uint64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return uint64(ts.Nano()), true
}

// threadCPU is the calling thread's CPU time in ns.
func threadCPU() (uint64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return uint64(ts.Nano()), true
}

// timeKernel runs the kernel twice and returns the CPU time of the second
// pass in ns: the first brings the weights back into the caches they
// stay in while a model serves, so the time is not that of memory.
func timeKernel(k *kernelBuf) (uint64, bool) {
	gemv(k)
	a, ok := threadCPU()
	if !ok {
		return 0, false
	}
	gemv(k)
	b, ok := threadCPU()
	if !ok || b < a {
		return 0, false
	}
	return b - a, true
}

// newKernelBuf is the kernel's buffers, filled.
func newKernelBuf() *kernelBuf {
	k := &kernelBuf{w: make([]float32, kernelRows*kernelCols), x: make([]float32, kernelCols), y: make([]float32, kernelRows)}
	for i := range k.w {
		k.w[i] = float32(i%97)/97 - 0.5
	}
	for i := range k.x {
		k.x[i] = float32(i%13) / 13
	}
	return k
}
