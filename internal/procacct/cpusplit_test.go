package procacct

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// taskStat writes a thread's stat with the CPU it last ran on (field 39).
func (f *fakeProc) taskStat(pid, tid, cpu int) {
	// Fields 3–38 (state … exit_signal), then processor.
	rest := strings.Repeat("0 ", 35)
	f.write(fmt.Sprintf("%d/task/%d/stat", pid, tid), fmt.Sprintf("%d (srv worker) R %s%d 0 0\n", tid, rest, cpu))
}

func TestParseProcessor(t *testing.T) {
	for _, c := range []struct {
		in   string
		cpu  int
		good bool
	}{
		// A real line (head's own stat): processor 1.
		{"10390 (head) R 10346 10346 8034 0 -1 4194304 105 0 0 0 0 0 0 0 20 0 1 0 3050840 2998272 404 18446744073709551615 94539456749568 94539456773673 140731257605920 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94539456789520\n", 1, true},
		// A name with spaces and parentheses does not shift the fields.
		{"7 (a) b (c) S " + strings.Repeat("0 ", 35) + "3 0\n", 3, true},
		{"7 (short) S 1 2 3\n", 0, false},
		{"no parenthesis at all", 0, false},
		{"7 (x) S " + strings.Repeat("0 ", 35) + "-1 0\n", 0, false},
	} {
		cpu, ok := ParseProcessor([]byte(c.in))
		if ok != c.good || cpu != c.cpu {
			t.Errorf("ParseProcessor(%q) = %d, %v; want %d, %v", c.in, cpu, ok, c.cpu, c.good)
		}
	}
}

func FuzzParseProcessor(f *testing.F) {
	f.Add([]byte("1 (x) R " + strings.Repeat("0 ", 35) + "1 0\n"))
	f.Add([]byte("1 ((() R 2"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if cpu, ok := ParseProcessor(b); ok && cpu < 0 {
			t.Fatalf("negative CPU %d from %q", cpu, b)
		}
	})
}

func TestCPUSplitChargesTheCPUAThreadIsOn(t *testing.T) {
	var s cpuSplit
	s.observe("a", 100, 0) // first sight: nothing to charge
	s.observe("b", 50, 1)
	s.observe("a", 400, 0) // 300 on CPU 0
	s.observe("b", 250, 3) // 200 on CPU 3 (it moved)
	s.observe("a", 350, 0) // backwards (a reused id): starts again
	s.observe("a", 360, 0) // 10 more
	if got, want := s.copyOut(), []uint64{310, 0, 0, 200}; !slices.Equal(got, want) {
		t.Fatalf("split %v, want %v", got, want)
	}
	s.keep(map[string]bool{"a": true})
	s.observe("b", 900, 1) // exited and dropped: seen afresh, nothing charged
	if got := s.copyOut(); got[1] != 0 {
		t.Fatalf("a dropped thread was charged: %v", got)
	}
	s.observe("x", 10, maxSplitCPU) // beyond the kept ids: never charged
	s.observe("x", 20, maxSplitCPU)
	if len(s.copyOut()) != 4 {
		t.Fatalf("split grew for an out-of-range CPU: %v", s.copyOut())
	}
}

func TestProcsSampleCPUs(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, 1, 500, "server")
	f.thread(10, 11, 1000, 0)
	f.taskStat(10, 11, 0)
	f.thread(10, 12, 5000, 0)
	f.taskStat(10, 12, 1)
	p, err := NewProcs(f.root, "test", func() ([]int, error) { return []int{10}, nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	p.SampleCPUs() // first sight of each thread
	f.thread(10, 11, 1600, 0)
	f.thread(10, 12, 5100, 0)
	p.SampleCPUs()
	f.thread(10, 11, 1700, 0)
	f.taskStat(10, 11, 1) // thread 11 moved to CPU 1
	p.SampleCPUs()
	r, err := p.Read(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{600, 200}; !slices.Equal(r.CPUNsByCPU, want) {
		t.Fatalf("by CPU %v, want %v", r.CPUNsByCPU, want)
	}
	a := r
	f.thread(10, 11, 1800, 0)
	p.SampleCPUs()
	b, _ := p.Read(context.Background(), "")
	d, ok := Delta(a, b)
	if !ok || !slices.Equal(d.CPUNsByCPU, []uint64{0, 100}) {
		t.Fatalf("delta by CPU %v (%v), want [0 100]", d.CPUNsByCPU, ok)
	}
}

// A model thread that runs has its time charged to a CPU by SampleCPUs,
// and Read reports the model's split.
func TestThreadsSampleCPUs(t *testing.T) {
	acct := NewThreads(false)
	spinModel(t, acct, "mlp")
	// The spinning thread's run time only moves forward: sample until
	// some of it is charged (no sleeps).
	var r Reading
	for i, total := 0, uint64(0); total == 0; i++ {
		if i == 100_000 {
			t.Fatalf("nothing charged to any CPU after %d samples: %+v", i, r)
		}
		acct.SampleCPUs()
		r, _ = acct.Read(context.Background(), "mlp")
		total = 0
		for _, ns := range r.CPUNsByCPU {
			total += ns
		}
	}
	if r.Threads != 1 {
		t.Fatalf("reading %+v, want one model thread", r)
	}
}

// BenchmarkProcsSampleCPUs is the cost of one sample (the probe takes
// one every 100 ms) of a process with 64 threads, about what Triton
// runs with a few models loaded.
func BenchmarkProcsSampleCPUs(b *testing.B) {
	done := make(chan struct{})
	defer close(done)
	for range 64 {
		ready := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(ready)
			<-done
		}()
		<-ready
	}
	self := os.Getpid()
	p, err := NewProcs("/proc", "self", func() ([]int, error) { return []int{self}, nil }, false)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p.SampleCPUs()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(p.threads), "ns/thread")
}
