package engine

import (
	"math"
	"testing"

	"github.com/perfscen/perfscen/internal/wakeprobe"
	"github.com/perfscen/perfscen/runner/result"
)

// A vCPU's speed moves on its own. A server whose every request ran on
// CPU 0 while the host slowed CPU 0 by half (its kernel 150 µs against
// 100 on CPU 1) does the same work as before; divided by the kernel's
// machine-wide mean (125 µs, most of its runs on the idle CPU 1 in a real
// run) it would read 20% more work, divided by CPU 0's own kernel it
// reads the same.
func TestWorkDividesEachCPUByItsOwnKernel(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cpuUs      float64
		split      []float64
		overall    float64
		byCPU      []float64
		want       float64
		wantPerCPU bool
	}{
		{"fast state: all on CPU 0", 1000, []float64{1000, 0}, 100, []float64{100, 100}, 10, true},
		{"CPU 0 slowed by half, the server on it", 1500, []float64{1500, 0}, 125, []float64{150, 100}, 10, true},
		{"split half and half", 1250, []float64{750, 500}, 125, []float64{150, 100}, 1250 * (0.6/150 + 0.4/100), true},
		{"the sampled split is a share of the window's CPU time", 1500, []float64{700, 0}, 125, []float64{150, 100}, 10, true},
		{"a CPU without its own kernel takes the machine's", 1000, []float64{500, 500}, 125, []float64{0, 100}, 500.0/125 + 500.0/100, true},
		{"no split: the machine-wide mean", 1500, nil, 125, []float64{150, 100}, 12, false},
		{"no kernel by CPU: the machine-wide mean", 1500, []float64{1500}, 125, nil, 12, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &result.ProcessStats{CPUUs: tt.cpuUs, CPUUsByCPU: tt.split, Inferences: 1}
			d := &result.Disturbance{GEMVUs: &tt.overall, GEMVUsByCPU: tt.byCPU}
			withWork(p, d)
			if p.Work == nil || math.Abs(*p.Work-tt.want) > 1e-9 || p.WorkByCPU != tt.wantPerCPU {
				t.Fatalf("work %v (by CPU %v), want %g (%v)", p.Work, p.WorkByCPU, tt.want, tt.wantPerCPU)
			}
		})
	}
}

// The window's disturbance carries each CPU's kernel time where it ran
// often enough to be read.
func TestDisturbanceKernelByCPU(t *testing.T) {
	a := CPUSample{Total: 100, Wake: &wakeprobe.Snapshot{}}
	b := CPUSample{Total: 200, Wake: &wakeprobe.Snapshot{KernelRuns: 10, KernelNs: 2_000_000,
		KernelCPU: []wakeprobe.KernelCount{{Runs: 1, Ns: 300_000}, {Runs: 5, Ns: 1_000_000}, {Runs: 4, Ns: 700_000}}}}
	d := disturbance(a, b)
	if d == nil || d.GEMVUs == nil || *d.GEMVUs != 200 {
		t.Fatalf("machine-wide kernel %+v", d)
	}
	want := []float64{0, 200, 175} // CPU 0 ran it once: too few
	if len(d.GEMVUsByCPU) != len(want) {
		t.Fatalf("by CPU %v, want %v", d.GEMVUsByCPU, want)
	}
	for i := range want {
		if math.Abs(d.GEMVUsByCPU[i]-want[i]) > 1e-9 {
			t.Fatalf("by CPU %v, want %v", d.GEMVUsByCPU, want)
		}
	}
}
