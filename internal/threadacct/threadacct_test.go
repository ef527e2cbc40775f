package threadacct

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The time an excluded goroutine's thread runs is counted in Excluded,
// during the span and after it; nothing is counted once it ends.
func TestExcludedCountsTheSpan(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc/self/task on this system")
	}
	run0, _ := Excluded()
	spun := make(chan uint64)
	go func() {
		done := Exclude()
		tid := unix.Gettid()
		start, ok := read(tid)
		if !ok {
			done()
			spun <- 0
			return
		}
		// Run on the CPU until the kernel has counted 2 ms of it.
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			if now, _ := read(tid); now[0]-start[0] >= 2e6 {
				break
			}
		}
		mid, _ := Excluded()
		done()
		spun <- mid
	}()
	mid := <-spun
	if mid == 0 {
		t.Skip("schedstat unreadable")
	}
	if mid-run0 < 2e6 {
		t.Errorf("during the span %d ns excluded, want ≥ 2ms", mid-run0)
	}
	after, _ := Excluded()
	again, _ := Excluded()
	if after < mid || again != after {
		t.Errorf("after the span: %d then %d (mid %d); want it kept, and fixed", after, again, mid)
	}
}
