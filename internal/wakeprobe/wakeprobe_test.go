package wakeprobe

import (
	"github.com/perfscen/perfscen/runner/result"
	"math"
	"runtime"
	"testing"
	"time"
)

// Every delay lands in the bucket whose range holds it, and the ranges
// tile the line without gaps.
func TestBuckets(t *testing.T) {
	for _, ns := range []uint64{0, 999, 1000, 1500, 2000, 7999, 8000, 123456, 1_000_000, 3_999_999, 1 << 40} {
		i := bucketOf(ns)
		lo, hi := bucketBounds(i)
		us := float64(ns) / 1e3
		if i < NumBuckets-1 && (us < lo || us >= hi) {
			t.Errorf("%d ns in bucket %d [%g, %g) µs", ns, i, lo, hi)
		}
	}
	for i := 1; i < NumBuckets; i++ {
		_, prevHi := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if math.Abs(prevHi-lo) > 1e-9 {
			t.Fatalf("gap between bucket %d and %d: %g vs %g", i-1, i, prevHi, lo)
		}
	}
}

// A window's quantiles are read from the difference of two snapshots,
// within a bucket's width (1/8 of its power of two).
func TestWindowQuantiles(t *testing.T) {
	var a, b Snapshot
	add := func(s *Snapshot, us float64, n int) {
		for range n {
			ns := uint64(us * 1e3)
			s.Counts[bucketOf(ns)]++
			s.SumNs += ns
		}
	}
	add(&a, 5, 1000) // before the window: all short
	b = a
	add(&b, 10, 90) // the window: 90 short, 10 long
	add(&b, 2000, 10)
	w := b.Sub(&a)
	if w.N() != 100 {
		t.Fatalf("N = %d", w.N())
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 10}, {0.9, 10}, {0.95, 2000}, {0.999, 2000}} {
		got, ok := w.Quantile(tc.q)
		if !ok || math.Abs(got-tc.want)/tc.want > 1.0/8 {
			t.Errorf("q%g = %g, want about %g", tc.q, got, tc.want)
		}
	}
	if m, _ := w.MeanUs(); math.Abs(m-209) > 1 {
		t.Errorf("mean = %g, want 209", m)
	}
	var empty Snapshot
	if _, ok := empty.Quantile(0.5); ok {
		t.Error("an empty window has a quantile")
	}
}

// The probe counts wake-ups while held and its thread ends with the last
// release.
func TestProbeRunsWhileHeld(t *testing.T) {
	if _, _, ok := Acquire(); ok {
		t.Fatal("the probe started before Enable")
	}
	Enable()
	before := runtime.NumGoroutine()
	p, release, ok := Acquire()
	if !ok {
		t.Skip("no /proc/thread-self/schedstat here")
	}
	_, release2, _ := Acquire()
	deadline := time.Now().Add(time.Minute)
	for s := p.Snapshot(); s.N() < 3; s = p.Snapshot() {
		if time.Now().After(deadline) {
			t.Fatal("no wake-up counted in a minute")
		}
		runtime.Gosched()
	}
	release()
	release() // a second call of the same release is a no-op
	if shared == nil {
		t.Fatal("the probe stopped while still held")
	}
	release2()
	if shared != nil {
		t.Fatal("the probe runs after its last release")
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines %d after release, %d before", n, before)
	}
}

// The kernel's CPU time is read from the thread's own clock: positive,
// and a window's mean comes from the difference of two snapshots.
func TestKernelSpeed(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := newKernelBuf()
	ns, ok := timeKernel(buf)
	if !ok || ns == 0 {
		t.Fatalf("kernel CPU time %d, %v", ns, ok)
	}
	a := Snapshot{KernelRuns: 10, KernelNs: 200_000}
	b := Snapshot{KernelRuns: 60, KernelNs: 1_200_000}
	d := b.Sub(&a)
	if us, ok := d.KernelUs(); !ok || us != 20 {
		t.Fatalf("mean kernel time %g µs, %v; want 20", us, ok)
	}
	var none Snapshot
	if _, ok := none.KernelUs(); ok {
		t.Fatal("no run: want no mean")
	}
}

// runner/result reads kept windows with its own copy of the bucket
// layout: the two must agree.
func TestBucketLayoutMatchesResult(t *testing.T) {
	for i := 0; i < NumBuckets; i++ {
		lo, hi := bucketBounds(i)
		rlo, rhi := result.WakeupBucketBounds(i)
		if lo != rlo || hi != rhi {
			t.Fatalf("bucket %d: [%g, %g) here, [%g, %g) in result", i, lo, hi, rlo, rhi)
		}
	}
}

// The kernel runs by the clock, not by the count of wake-ups: on a busy
// machine every wake-up comes late (here 5 ms instead of 2), and a window
// of one second must still hold enough runs for a speed figure.
func TestKernelRunsByTheClock(t *testing.T) {
	for _, every := range []time.Duration{Period, 5 * time.Millisecond, 30 * time.Millisecond} {
		var c speedClock
		runs := 0
		for now := time.Duration(0); now < time.Second; now += every {
			if c.due(uint64(now)) {
				runs++
			}
		}
		// At most one per period, and never more than one wake-up late:
		// a count of 50 wake-ups would give 10, 4 and 0 here.
		lo, hi := int(time.Second/(speedPeriod+every)), int(time.Second/speedPeriod)
		if runs < lo || runs > hi {
			t.Errorf("wake-ups every %v: %d runs in 1 s, want %d to %d", every, runs, lo, hi)
		}
	}
}
