package engine

import (
	"math"
	"strings"
	"testing"
)

func TestReadCPU(t *testing.T) {
	s, ok := ReadCPU("testdata/proc")
	if !ok {
		t.Fatal("testdata/proc not read")
	}
	// busy = user+nice+system+irq+softirq; total adds idle, iowait, steal.
	// Run and wait times are summed over the two threads under self/task.
	want := CPUSample{Busy: 1500, Steal: 400, Total: 10000, Own: 360, Load1: 3.5,
		RunNs: 3e9, WaitNs: 750e6, HaveSched: true, PressureUs: 7654321, UptimeUs: 12345670000, HavePSI: true}
	if s != want {
		t.Errorf("ReadCPU = %+v, want %+v", s, want)
	}
	if _, ok := ReadCPU("testdata/none"); ok {
		t.Error("a missing /proc read as ok")
	}
	// A kernel without PSI or schedstats (or a container hiding them)
	// still gives the other-process share, and says what is missing.
	bare, ok := ReadCPU("testdata/proc-bare")
	if !ok || bare.Total != 10000 || bare.HaveSched || bare.HavePSI {
		t.Fatalf("ReadCPU(bare) = %+v, %v", bare, ok)
	}
	notes := strings.Join(sentinelNotes(bare), "\n")
	if !strings.Contains(notes, "/proc/pressure/cpu is absent") || !strings.Contains(notes, "schedstat is not readable") {
		t.Errorf("notes for a bare /proc: %q", notes)
	}
	if n := sentinelNotes(s); len(n) != 0 {
		t.Errorf("notes with every signal present: %q", n)
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
	if d.RunQueueWait != nil || d.CPUPressure != nil {
		t.Errorf("signals recorded without their files: %+v", d)
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

// The contention perfscen itself meets: run-queue wait per unit of run
// time from its threads' schedstat, and CPU pressure per unit of wall time.
func TestDisturbanceContention(t *testing.T) {
	a := CPUSample{Total: 5000, RunNs: 1e9, WaitNs: 2e8, HaveSched: true, PressureUs: 1e6, UptimeUs: 5e6, HavePSI: true}
	b := a
	b.Total = 5200
	b.RunNs += 4e8 // ran 400 ms, waited 300 ms
	b.WaitNs += 3e8
	b.UptimeUs += 1e6 // 1 s of wall time, 600 ms with some task waiting
	b.PressureUs += 6e5
	d := disturbance(a, b)
	if d == nil || d.RunQueueWait == nil || math.Abs(*d.RunQueueWait-0.75) > 1e-12 || d.CPUPressure == nil || math.Abs(*d.CPUPressure-0.6) > 1e-12 {
		t.Fatalf("disturbance = %+v, want run-queue wait 0.75 and pressure 0.6", d)
	}
	// A thread that exited took its times with it: no reading, not a negative one.
	c := b
	c.Total, c.RunNs, c.WaitNs = 5400, b.RunNs-1e8, b.WaitNs
	if d := disturbance(b, c); d == nil || d.RunQueueWait != nil {
		t.Fatalf("sums going backwards gave a run-queue wait: %+v", d)
	}
	// Only one sample with PSI (the file came and went): none recorded.
	c = b
	c.Total, c.HavePSI = 5400, false
	if d := disturbance(b, c); d.CPUPressure != nil {
		t.Fatalf("pressure from one reading: %+v", d)
	}
}

func TestParsers(t *testing.T) {
	if us, ok := parseUptime([]byte("12.5 3.00\n")); !ok || us != 12500000 {
		t.Errorf("parseUptime = %d, %v", us, ok)
	}
	for _, bad := range []string{"", "x", "1.2345678", "-1.0", "1.x"} {
		if _, ok := parseUptime([]byte(bad)); ok {
			t.Errorf("parseUptime(%q) ok", bad)
		}
	}
	if n, ok := parsePressureSome([]byte("full avg10=0 total=9\nsome avg10=0.00 total=42\n")); !ok || n != 42 {
		t.Errorf("parsePressureSome = %d, %v", n, ok)
	}
	for _, bad := range []string{"", "some avg10=1.0", "some total=x", "full total=3"} {
		if _, ok := parsePressureSome([]byte(bad)); ok {
			t.Errorf("parsePressureSome(%q) ok", bad)
		}
	}
	if r, w, ok := parseSchedstat([]byte("10 20 3\n")); !ok || r != 10 || w != 20 {
		t.Errorf("parseSchedstat = %d %d %v", r, w, ok)
	}
	for _, bad := range []string{"", "10", "x 1 1", "1 -2 3"} {
		if _, _, ok := parseSchedstat([]byte(bad)); ok {
			t.Errorf("parseSchedstat(%q) ok", bad)
		}
	}
	if v, ok := parseSelfStat([]byte("1 (a) b) S 1 1 1 0 -1 0 0 0 0 0 7 8 0")); !ok || v != 15 {
		t.Errorf("parseSelfStat with a ')' in the name = %d, %v", v, ok)
	}
	if _, _, _, ok := parseProcStat([]byte("cpu 1 2 3 4 5 6 x 8\n")); ok {
		t.Error("parseProcStat took a non-number")
	}
}

// The /proc parsers never panic and never report a reading from text that
// does not hold one in their format.
func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("5084989 1377611 5\n"))
	f.Add([]byte(""))
	f.Add([]byte("1 2"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, _, ok := parseSchedstat(b); ok && len(strings.Fields(string(b))) < 2 {
			t.Fatalf("ok from %q", b)
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	f.Add([]byte("some avg10=37.31 avg60=19.96 avg300=12.21 total=6858476979\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Add([]byte("some total="))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, ok := parsePressureSome(b); ok && !strings.Contains(string(b), "total=") {
			t.Fatalf("ok from %q", b)
		}
	})
}

func FuzzParseUptime(f *testing.F) {
	f.Add([]byte("12345.67 20000.00\n"))
	f.Add([]byte("1."))
	f.Add([]byte(".5"))
	f.Fuzz(func(t *testing.T, b []byte) {
		us, ok := parseUptime(b)
		if ok && us > (1<<40+1)*1e6 {
			t.Fatalf("%d µs from %q", us, b)
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("cpu  1000 0 500 8000 100 0 0 400 0 0\ncpu0 500 0 250 4000 50 0 0 200 0 0\n"), []byte("4242 (perf scen) S 1 4242 4242 0 -1 4194304 100 0 0 0 300 60 0 0"), []byte("3.50 2.10 1.00 4/321 4242\n"))
	f.Fuzz(func(t *testing.T, stat, self, load []byte) {
		if busy, steal, total, ok := parseProcStat(stat); ok && total < busy+steal {
			t.Fatalf("busy %d + steal %d over total %d", busy, steal, total)
		}
		parseSelfStat(self)
		if v, ok := parseLoadavg(load); ok && (v < 0 || math.IsNaN(v)) {
			t.Fatalf("load %g from %q", v, load)
		}
	})
}
