package runner

import (
	"math"
	"testing"
)

func TestReadCPU(t *testing.T) {
	s, ok := ReadCPU("testdata/proc")
	if !ok {
		t.Fatal("testdata/proc not read")
	}
	// busy = user+nice+system+irq+softirq; total adds idle, iowait, steal.
	want := CPUSample{Busy: 1500, Steal: 400, Total: 10000, Own: 360, Load1: 3.5}
	if s != want {
		t.Errorf("ReadCPU = %+v, want %+v", s, want)
	}
	if _, ok := ReadCPU("testdata/none"); ok {
		t.Error("a missing /proc read as ok")
	}
}

func TestDisturbanceLeavesOutOwnCPU(t *testing.T) {
	a := CPUSample{Busy: 1000, Steal: 10, Total: 5000, Own: 200}
	// 2 CPUs × 100 ticks = 200 ticks: 120 busy, of which 30 are ours; 10 stolen.
	b := CPUSample{Busy: 1120, Steal: 20, Total: 5200, Own: 230, Load1: 2}
	d := disturbance(a, b)
	if d == nil || math.Abs(d.OtherCPU-0.45) > 1e-12 || math.Abs(d.Steal-0.05) > 1e-12 || d.Load1 != 2 {
		t.Fatalf("disturbance = %+v, want other 0.45, steal 0.05, load 2", d)
	}
	// Our own counters can run ahead of the machine's between reads: never negative.
	b.Own = 400
	if d := disturbance(a, b); d.OtherCPU != 0 {
		t.Errorf("other CPU %g, want 0", d.OtherCPU)
	}
	if disturbance(b, a) != nil {
		t.Error("counters going backwards gave a disturbance")
	}
}
