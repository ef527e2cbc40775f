package procacct

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/prom"
)

// fakeProc is a /proc tree in a temporary folder.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, root: t.TempDir()}
	f.uptime(100)
	return f
}

func (f *fakeProc) write(path, body string) {
	f.t.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) uptime(s float64) { f.write("uptime", fmt.Sprintf("%.2f 50.00\n", s)) }

// proc makes a process with a parent, a start time (ticks) and a name.
func (f *fakeProc) proc(pid, ppid int, start uint64, comm string) {
	f.write(fmt.Sprintf("%d/stat", pid), fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %d 100 1\n", pid, comm, ppid, pid, pid, start))
	f.write(fmt.Sprintf("%d/comm", pid), comm+"\n")
}

func (f *fakeProc) thread(pid, tid int, run, wait uint64) {
	f.write(fmt.Sprintf("%d/task/%d/schedstat", pid, tid), fmt.Sprintf("%d %d 7\n", run, wait))
}

func (f *fakeProc) exit(pid, tid int) {
	if err := os.RemoveAll(filepath.Join(f.root, strconv.Itoa(pid), "task", strconv.Itoa(tid))); err != nil {
		f.t.Fatal(err)
	}
}

func TestProcsCountsWhatHappenedBetweenReads(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, 1, 500, "server")
	f.thread(10, 10, 1000, 100)
	f.thread(10, 11, 5000, 500)
	f.proc(20, 1, 400, "stub") // listed only later, born before the first read
	f.thread(20, 20, 9999, 999)
	pids := []int{10}
	p, err := NewProcs(f.root, "test", func() ([]int, error) { return pids, nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := p.Read(context.Background(), "")
	if r.CPUNs != 0 || r.RunQueueNs != 0 || !r.HaveRunQueue || r.Threads != 2 {
		t.Fatalf("first read after start: %+v, want zero times over 2 threads", r)
	}
	// Both threads ran; thread 11 then exits and 12 is born; process 20
	// (born before) joins the list and 30 (born after) appears.
	f.thread(10, 10, 1300, 150)
	f.thread(10, 11, 5200, 510)
	r, _ = p.Read(context.Background(), "")
	if r.CPUNs != 500 || r.RunQueueNs != 60 {
		t.Fatalf("after running: %+v, want cpu 500 runq 60", r)
	}
	f.uptime(200) // 20000 ticks: later births are after this read
	f.exit(10, 11)
	f.thread(10, 12, 40, 4)
	f.proc(30, 10, 20100, "worker")
	f.thread(30, 30, 70, 7)
	pids = []int{10, 20, 30}
	r, _ = p.Read(context.Background(), "")
	// 12 counts from birth (new thread of a known process), 30 too (born
	// after the previous read), 20 does not (its past is not this window).
	if r.CPUNs != 500+40+70 || r.RunQueueNs != 60+4+7 {
		t.Fatalf("after births: %+v, want cpu %d runq %d", r, 500+40+70, 60+4+7)
	}
	f.thread(20, 20, 10099, 1009)
	r, _ = p.Read(context.Background(), "")
	if r.CPUNs != 610+100 || r.RunQueueNs != 71+10 {
		t.Fatalf("stub's next interval: %+v, want cpu 710 runq 81", r)
	}
}

func TestProcsGone(t *testing.T) {
	f := newFakeProc(t)
	if _, err := NewProcs(f.root, "test", func() ([]int, error) { return nil, nil }, false); err == nil {
		t.Fatal("no process: want an error")
	}
}

func TestTreeFollowsChildren(t *testing.T) {
	f := newFakeProc(t)
	f.proc(1, 0, 1, "init")
	f.proc(10, 1, 5, "tritonserver")
	f.proc(11, 10, 6, "stub")
	f.proc(12, 11, 7, "grandchild")
	f.proc(13, 1, 8, "other")
	got, err := Tree(f.root, 10)()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[10 11 12]" {
		t.Fatalf("tree of 10: %v", got)
	}
	if _, err := Tree(f.root, 99)(); err == nil {
		t.Fatal("a missing process: want an error")
	}
}

func TestCgroupListsEveryLevel(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("5\n6\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "child"), 0o755)
	os.WriteFile(filepath.Join(dir, "child", "cgroup.procs"), []byte("7\n"), 0o644)
	got, err := Cgroup(dir)()
	if err != nil || fmt.Sprint(got) != "[5 6 7]" {
		t.Fatalf("cgroup: %v %v", got, err)
	}
}

const netTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F41 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 20 4 30 10 -1
`

const netTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F42 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4545 1 0000000000000000 100 0 0 10 0
`

func TestParseNetTCP(t *testing.T) {
	ls, err := ParseNetTCP([]byte(netTCP))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Addr != netip.MustParseAddrPort("127.0.0.1:8001") || ls[0].Inode != 4242 ||
		ls[1].Addr != netip.MustParseAddrPort("0.0.0.0:8000") {
		t.Fatalf("tcp: %+v", ls)
	}
	ls6, err := ParseNetTCP([]byte(netTCP6))
	if err != nil || len(ls6) != 1 || ls6[0].Addr != netip.MustParseAddrPort("[::1]:8002") {
		t.Fatalf("tcp6: %+v %v", ls6, err)
	}
	for _, c := range []struct {
		l      Listener
		target string
		want   bool
	}{
		{ls[0], "127.0.0.1:8001", true},
		{ls[0], "127.0.0.2:8001", false},
		{ls[0], "127.0.0.1:8000", false},
		{ls[1], "127.0.0.1:8000", true},
		{ls[1], "10.1.2.3:8000", true},
	} {
		if got := c.l.Accepts(netip.MustParseAddrPort(c.target)); got != c.want {
			t.Errorf("%v accepts %s: %v, want %v", c.l.Addr, c.target, got, c.want)
		}
	}
	if _, err := ParseNetTCP([]byte("hdr\n 0: ZZ:1 00:0 0A 0 0 0 0 0 1 1\n")); err == nil {
		t.Error("a bad address: want an error")
	}
}

func FuzzParseNetTCP(f *testing.F) {
	f.Add([]byte(netTCP))
	f.Add([]byte(netTCP6))
	f.Fuzz(func(t *testing.T, b []byte) {
		ls, err := ParseNetTCP(b)
		if err == nil {
			for _, l := range ls {
				if !l.Addr.IsValid() {
					t.Fatalf("invalid address from %q", b)
				}
			}
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("123 456 7\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		run, wait, ok := ParseSchedstat(b)
		if !ok && (run != 0 || wait != 0) {
			t.Fatal("values without ok")
		}
	})
}

// listener puts a listening socket owned by pid into the fake /proc.
func (f *fakeProc) listener(pid int, comm, addrHex string, inode int) {
	f.write("net/tcp", strings.Split(netTCP, "\n")[0]+"\n   0: "+addrHex+" 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 "+strconv.Itoa(inode)+" 1 0 100 0 0 10 0\n")
	f.proc(pid, 1, 50, comm)
	fd := filepath.Join(f.root, strconv.Itoa(pid), "fd")
	os.MkdirAll(fd, 0o755)
	if err := os.Symlink("socket:["+strconv.Itoa(inode)+"]", filepath.Join(fd, "3")); err != nil {
		f.t.Fatal(err)
	}
}

func TestLocate(t *testing.T) {
	ctx := context.Background()
	t.Run("found listening", func(t *testing.T) {
		f := newFakeProc(t)
		f.listener(77, "tritonserver", "0100007F:1F41", 4242)
		f.thread(77, 77, 10, 1)
		f.proc(78, 77, 60, "triton_python_b")
		f.thread(78, 78, 20, 2)
		loc, err := Locate(ctx, Target{Field: "server.process", Root: f.root, Addrs: []string{"127.0.0.1:8001"}, Self: 1})
		if err != nil || loc.Source == nil {
			t.Fatalf("%+v %v", loc, err)
		}
		if !strings.Contains(loc.Note, "process 77 (tritonserver) and its children, found listening on 127.0.0.1:8001") {
			t.Errorf("note: %s", loc.Note)
		}
		f.thread(78, 78, 220, 2)
		r, _ := loc.Source.Read(ctx, "")
		if r.CPUNs != 200 || r.Threads != 2 {
			t.Errorf("the child's CPU counts: %+v", r)
		}
	})
	t.Run("forwarder", func(t *testing.T) {
		f := newFakeProc(t)
		f.listener(55, "docker-proxy", "00000000:1F41", 4242)
		loc, err := Locate(ctx, Target{Field: "server.process", Root: f.root, Addrs: []string{"localhost:8001"}, Self: 1})
		if err != nil || loc.Source != nil || !strings.Contains(loc.Note, "port 8001 is held by docker-proxy (pid 55), which forwards it") ||
			!strings.Contains(loc.Note, "server.process.pid") {
			t.Fatalf("%+v %v", loc, err)
		}
	})
	t.Run("itself", func(t *testing.T) {
		f := newFakeProc(t)
		f.listener(55, "perfscen", "0100007F:1F41", 4242)
		loc, _ := Locate(ctx, Target{Field: "server.process", Root: f.root, Addrs: []string{"127.0.0.1:8001"}, Self: 55})
		if loc.Source != nil || !strings.Contains(loc.Note, "is perfscen itself") {
			t.Fatalf("%+v", loc)
		}
	})
	t.Run("remote, metrics", func(t *testing.T) {
		f := newFakeProc(t)
		cpu := 1.5
		scrape := func(context.Context) ([]prom.Sample, error) {
			return []prom.Sample{{Name: ProcessCPU, Value: cpu}}, nil
		}
		loc, err := Locate(ctx, Target{Field: "server.process", Root: f.root, Addrs: []string{"192.0.2.7:8001"}, MetricsURL: "http://192.0.2.7:8002/metrics", Scrape: scrape})
		if err != nil || loc.Source == nil || !strings.Contains(loc.Note, "process_cpu_seconds_total at http://192.0.2.7:8002/metrics") {
			t.Fatalf("%+v %v", loc, err)
		}
		a, _ := loc.Source.Read(ctx, "")
		cpu = 2.25
		b, _ := loc.Source.Read(ctx, "")
		if d, ok := Delta(a, b); !ok || d.CPUNs != 750_000_000 || d.HaveRunQueue {
			t.Errorf("delta %+v %v", d, ok)
		}
	})
	t.Run("remote, no process counter", func(t *testing.T) {
		f := newFakeProc(t)
		scrape := func(context.Context) ([]prom.Sample, error) {
			return []prom.Sample{{Name: "nv_inference_count", Value: 3}}, nil
		}
		loc, err := Locate(ctx, Target{Field: "servers.candidate.process", Root: f.root, Addrs: []string{"192.0.2.7:8001"}, MetricsURL: "http://m/metrics", Scrape: scrape})
		if err != nil || loc.Source != nil || !strings.Contains(loc.Note, "has no process_cpu_seconds_total") || !strings.Contains(loc.Note, "servers.candidate.process.pid") {
			t.Fatalf("%+v %v", loc, err)
		}
	})
	t.Run("named", func(t *testing.T) {
		f := newFakeProc(t)
		f.proc(90, 1, 5, "torchserve")
		f.thread(90, 90, 1, 1)
		loc, err := Locate(ctx, Target{Field: "server.process", Root: f.root, Config: Config{PID: 90}})
		if err != nil || loc.Source == nil || !strings.Contains(loc.Note, "process 90 (torchserve) and its children, named by server.process.pid") {
			t.Fatalf("%+v %v", loc, err)
		}
		_, err = Locate(ctx, Target{Field: "server.process", Root: f.root, Config: Config{PID: 91}})
		if failure.KindOf(err) != failure.Environment || !strings.Contains(err.Error(), "server.process.pid: process 91 is not running") {
			t.Errorf("a process that is not running: %v", err)
		}
		pf := filepath.Join(t.TempDir(), "pid")
		os.WriteFile(pf, []byte("ninety\n"), 0o644)
		_, err = Locate(ctx, Target{Field: "server.process", Root: f.root, Config: Config{PIDFile: pf}})
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), `holds "ninety", not a process id`) {
			t.Errorf("a bad pid file: %v", err)
		}
		_, err = Locate(ctx, Target{Field: "server.process", Root: f.root, Config: Config{Cgroup: "/nonexistent/cg"}})
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "server.process.cgroup: /nonexistent/cg is not a cgroup folder") {
			t.Errorf("a missing cgroup: %v", err)
		}
	})
	t.Run("off", func(t *testing.T) {
		loc, err := Locate(ctx, Target{Field: "server.process", Config: Config{Off: true}, Own: NewThreads(false)})
		if err != nil || loc.Source != nil || !strings.Contains(loc.Note, "not measured (server.process: off)") {
			t.Fatalf("%+v %v", loc, err)
		}
	})
}

func TestDelta(t *testing.T) {
	a := Reading{CPUNs: 10, RunQueueNs: 5, HaveRunQueue: true, Inferences: 2, HaveInferences: true}
	b := Reading{CPUNs: 30, RunQueueNs: 9, HaveRunQueue: true, Inferences: 6, HaveInferences: true, Threads: 3}
	d, ok := Delta(a, b)
	if !ok || d.CPUNs != 20 || d.RunQueueNs != 4 || d.Inferences != 4 || d.Threads != 3 {
		t.Fatalf("%+v %v", d, ok)
	}
	if _, ok := Delta(b, a); ok {
		t.Fatal("backwards: want not ok")
	}
}

// spinSink keeps spin's work from being optimized away.
var spinSink atomic.Int64

// spin burns CPU on the calling thread.
func spin(n int) {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	spinSink.Add(int64(x))
}

// spinModel joins a thread to model on acct and keeps it spinning until
// the test ends; it returns the thread's id.
func spinModel(t *testing.T, acct *Threads, model string) int {
	t.Helper()
	tidc := make(chan int)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		leave := acct.Join(model)
		defer leave()
		tidc <- tidOf()
		for {
			select {
			case <-stop:
				return
			default:
				spin(100_000)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return <-tidc
}

func TestThreadsCountTheirOwnThreads(t *testing.T) {
	acct := NewThreads(false)
	done := make(chan struct{})
	ready := make(chan struct{})
	go func() {
		leave := acct.Join("mlp")
		defer leave()
		close(ready)
		spin(20_000_000)
		acct.Count("mlp", 8)
		<-done
	}()
	<-ready
	// The spinning thread's time shows once it has run; keep reading
	// until it has (no sleeps: the counter only moves forward).
	var r Reading
	for r.Inferences == 0 {
		r, _ = acct.Read(context.Background(), "mlp")
	}
	close(done)
	if r.CPUNs == 0 || !r.HaveRunQueue || r.HavePreempt || !r.HaveInferences || r.Inferences != 8 || r.Threads != 1 {
		t.Fatalf("reading %+v", r)
	}
}

func TestInstructionsPlumbing(t *testing.T) {
	// These machines have no hardware counters: the task clock, a
	// software event, shows that counters open, read and sum per thread.
	c := &instructions{ev: event{typ: 1 /* PERF_TYPE_SOFTWARE */, config: 1 /* TASK_CLOCK */, name: "task-clock"}, fds: map[int]int{}, last: map[int]uint64{}}
	defer c.close()
	acct := NewThreads(false)
	tid := spinModel(t, acct, "m")
	a, ok := c.read([]int{tid})
	if !ok {
		if errors.Is(c.refuse, os.ErrPermission) {
			t.Skip("perf_event_open refused here: ", c.refuse)
		}
		t.Fatalf("task clock refused: %v", c.refuse)
	}
	var b uint64
	for b <= a {
		b, _ = c.read([]int{tid})
	}
	if got := InstructionsRefused(fmt.Errorf("wrapped: %w", os.ErrNotExist)); !strings.Contains(got, "not counted") {
		t.Errorf("note: %s", got)
	}
}

// A model read before any of its instances ran has used nothing yet: a
// zero reading, not an error, or the point it belongs to would stop
// reading its server for the rest of the run (a flake of
// TestRunPlainKServeDefaults: "no more readings").
func TestThreadsReadBeforeTheModelRan(t *testing.T) {
	acct := NewThreads(false)
	r, err := acct.Read(t.Context(), "simple")
	if err != nil {
		t.Fatalf("read before the model ran: %v", err)
	}
	if r.CPUNs != 0 || r.Inferences != 0 || !r.HaveInferences || !r.HaveRunQueue {
		t.Errorf("reading %+v, want zeros that say they were counted", r)
	}
	leave := acct.Join("simple")
	acct.Count("simple", 3)
	leave()
	if r, err := acct.Read(t.Context(), "simple"); err != nil || r.Inferences != 3 {
		t.Errorf("after it ran: %+v, %v", r, err)
	}
}

func (f *fakeProc) switches(pid, tid int, vol, nonvol uint64) {
	f.write(fmt.Sprintf("%d/task/%d/status", pid, tid), fmt.Sprintf("Name:\tserver\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t%d\n", vol, nonvol))
}

// Each thread's wait over an interval is shared out by its own switches
// in that interval: a thread that slept and woke (voluntary) waited for
// wake-ups, one switched out while it worked (involuntary) for
// preemptions; one that did not switch at all waited runnable throughout.
func TestProcsSharesWaitByPreemptions(t *testing.T) {
	f := newFakeProc(t)
	f.proc(10, 1, 500, "server")
	f.thread(10, 10, 1000, 100)
	f.switches(10, 10, 50, 50)
	f.thread(10, 11, 1000, 100)
	f.switches(10, 11, 7, 7)
	f.thread(10, 12, 1000, 100)
	f.switches(10, 12, 3, 3)
	p, err := NewProcs(f.root, "test", func() ([]int, error) { return []int{10}, nil }, false)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Read(context.Background(), "")
	// 10: 90 woke, 10 preempted, waited 1000; 11: 1 and 3, waited 400;
	// 12: no switch, waited 60.
	f.thread(10, 10, 2000, 1100)
	f.switches(10, 10, 140, 60)
	f.thread(10, 11, 2000, 500)
	f.switches(10, 11, 8, 10)
	f.thread(10, 12, 2000, 160)
	b, _ := p.Read(context.Background(), "")
	d, ok := Delta(a, b)
	if !ok || !d.HavePreempt || d.RunQueueNs != 1460 || d.PreemptNs != 100+300+60 {
		t.Fatalf("delta %+v (ok %v): want runq 1460, preempt %d", d, ok, 100+300+60)
	}
	// A thread whose switches cannot be read (it exited between its
	// schedstat and its status): its whole wait counts, and the figure
	// stays.
	if err := os.Remove(filepath.Join(f.root, "10/task/11/status")); err != nil {
		t.Fatal(err)
	}
	f.thread(10, 11, 2500, 600)
	c, _ := p.Read(context.Background(), "")
	if d, ok := Delta(b, c); !ok || !d.HavePreempt || d.RunQueueNs != 100 || d.PreemptNs != 100 {
		t.Fatalf("without one thread's switches: %+v (ok %v), want runq 100, all of it counted", d, ok)
	}
}

func TestParseSwitches(t *testing.T) {
	for _, tt := range []struct {
		in        string
		vol, nonv uint64
		ok        bool
	}{
		{"Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n", 12, 3, true},
		{"voluntary_ctxt_switches: 12\n", 0, 0, false},
		{"voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t3\n", 0, 0, false},
		{"", 0, 0, false},
	} {
		v, n, ok := ParseSwitches([]byte(tt.in))
		if ok != tt.ok || (ok && (v != tt.vol || n != tt.nonv)) {
			t.Errorf("ParseSwitches(%q) = %d, %d, %v; want %d, %d, %v", tt.in, v, n, ok, tt.vol, tt.nonv, tt.ok)
		}
	}
}

func FuzzParseSwitches(f *testing.F) {
	f.Add([]byte("voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n"))
	f.Add([]byte("nonvoluntary_ctxt_switches:\t18446744073709551615\nvoluntary_ctxt_switches:\t0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, ok := ParseSwitches(b)
		if !ok && (v != 0 || n != 0) {
			t.Fatalf("not ok but %d, %d", v, n)
		}
	})
}
