package wakeprobe

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The machine's speed is not one number: on these virtual machines each
// vCPU sits on a host core of its own, and the host's other guests slow
// one core and not the other, for seconds at a time. Measured at rest on
// a 2-vCPU runner (a replica of mlp_reference's layers and the kernel on
// one thread pinned to each vCPU in turn, 10-s medians over 3.5 minutes):
// the model's CPU time per batch moved 1.47× from lowest to highest; over
// the kernel's time on the same vCPU, 1.34×; over the kernel's time on
// the other vCPU, 2.04×, worse than no kernel at all. A probe thread that
// runs wherever the scheduler puts it tends to land on a CPU the server
// leaves idle, which is the other one. So the kernel takes each allowed
// CPU in turn, pinned to it, and each CPU's time is kept apart
// (Snapshot.KernelCPU); a server's CPU time is shared out by the CPU it
// ran on (internal/procacct) and each part divided by its own CPU's
// kernel time (internal/engine).

// maxKernelCPUs bounds the CPU ids kept apart; beyond it the kernel runs
// unpinned and counts in the machine-wide mean only.
const maxKernelCPUs = 1024

// KernelCount is the kernel's runs on one CPU and the CPU time they took.
type KernelCount struct {
	Runs, Ns uint64
}

// cpuRotor hands out, in turn, the CPUs the probe's thread may run on.
type cpuRotor struct {
	home unix.CPUSet // the thread's affinity when the probe started
	cpus []int
	next int
}

// newCPURotor reads the calling thread's affinity; nil where it cannot be
// read or allows a single CPU (nothing to tell apart).
func newCPURotor() *cpuRotor {
	r := &cpuRotor{}
	if err := unix.SchedGetaffinity(0, &r.home); err != nil {
		return nil
	}
	for c := 0; c < maxKernelCPUs && c < len(r.home)*64; c++ {
		if r.home.IsSet(c) {
			r.cpus = append(r.cpus, c)
		}
	}
	if len(r.cpus) < 2 {
		return nil
	}
	return r
}

// width is one more than the highest CPU id the rotor hands out.
func (r *cpuRotor) width() int {
	if r == nil {
		return 0
	}
	return r.cpus[len(r.cpus)-1] + 1
}

// timeKernelOnNext runs the kernel pinned to the next CPU and gives back
// the thread's affinity. cpu is where it ran, -1 where that is not known
// (the pin failed, or the thread was found on another CPU).
func (r *cpuRotor) timeKernelOnNext(k *kernelBuf) (ns uint64, cpu int, ok bool) {
	if r == nil {
		ns, ok = timeKernel(k)
		return ns, -1, ok
	}
	want := r.cpus[r.next]
	r.next = (r.next + 1) % len(r.cpus)
	var one unix.CPUSet
	one.Set(want)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		ns, ok = timeKernel(k)
		return ns, -1, ok
	}
	ns, ok = timeKernel(k)
	cpu = -1
	if c, good := getcpu(); good && c == want {
		cpu = want
	}
	_ = unix.SchedSetaffinity(0, &r.home)
	return ns, cpu, ok
}

// getcpu is the CPU the calling thread runs on.
func getcpu() (int, bool) {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return 0, false
	}
	return int(cpu), true
}
