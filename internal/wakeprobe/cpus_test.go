package wakeprobe

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// Each CPU's kernel runs are kept apart and differenced like the rest.
func TestKernelByCPU(t *testing.T) {
	a := Snapshot{KernelRuns: 3, KernelNs: 900, KernelCPU: []KernelCount{{1, 300}, {2, 600}}}
	b := Snapshot{KernelRuns: 9, KernelNs: 3300, KernelCPU: []KernelCount{{4, 1200}, {5, 2100}}}
	d := b.Sub(&a)
	if us, runs := d.KernelUsOn(0); runs != 3 || us != 0.3 {
		t.Errorf("CPU 0: %g µs over %d runs, want 0.3 over 3", us, runs)
	}
	if us, runs := d.KernelUsOn(1); runs != 3 || us != 0.5 {
		t.Errorf("CPU 1: %g µs over %d runs, want 0.5 over 3", us, runs)
	}
	for _, c := range []int{-1, 2} {
		if _, runs := d.KernelUsOn(c); runs != 0 {
			t.Errorf("CPU %d: %d runs, want none", c, runs)
		}
	}
	// A snapshot taken before the CPUs were sized differences from zero.
	d = b.Sub(&Snapshot{})
	if _, runs := d.KernelUsOn(1); runs != 5 {
		t.Errorf("from an empty snapshot: %d runs on CPU 1, want 5", runs)
	}
}

// The rotor takes the allowed CPUs in turn, runs the kernel pinned to
// each, reports where it ran and gives the thread its affinity back.
func TestKernelTakesEachCPUInTurn(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newCPURotor()
	if r == nil {
		t.Skip("this thread may run on a single CPU: nothing to take in turn")
	}
	buf := newKernelBuf()
	seen := map[int]int{}
	for range 2 * len(r.cpus) {
		want := r.cpus[r.next]
		ns, cpu, ok := r.timeKernelOnNext(buf)
		if !ok || ns == 0 {
			t.Fatalf("kernel on CPU %d: %d ns, %v", want, ns, ok)
		}
		if cpu != want {
			t.Fatalf("kernel meant for CPU %d ran on %d", want, cpu)
		}
		seen[cpu]++
	}
	for _, c := range r.cpus {
		if seen[c] != 2 {
			t.Errorf("CPU %d took %d turns, want 2", c, seen[c])
		}
	}
	var now unix.CPUSet
	if err := unix.SchedGetaffinity(0, &now); err != nil || now != r.home {
		t.Errorf("affinity after the kernel %v (%v), want it given back: %v", now, err, r.home)
	}
}
