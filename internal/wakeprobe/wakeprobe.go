// Package wakeprobe measures how long the machine keeps a thread that
// wakes up waiting for a CPU: the delay every request pays at each
// wake-up on its path (the server's thread when the request arrives, the
// model's after a sleep or a lock, the client's when the reply lands).
//
// A neighbour on a shared runner slows a server mostly through those
// delays, so they are what a baseline gate must know to tell a busier
// machine from a slower build, and how much of a change the machine can
// account for. perfscen's own run-queue wait per unit of its run time
// (internal/engine) does not say that: it is a ratio to perfscen's CPU
// time, which changes with the server's speed, and it says nothing of the
// sizes of single delays, which decide a latency's tail.
//
// The probe is one OS thread that sleeps a fixed period in the kernel and,
// at each wake-up, reads the run-queue delay the kernel charged it since
// the last (its schedstat's second field): the wait between being woken
// and running, excluding timer slack and the Go scheduler. The delays go
// into a fixed log-linear histogram, so a window's distribution is the
// difference of two snapshots. Its cost is one wake-up and one pread per
// period (about 0.5% of one CPU at 2 ms), and it is not the client's work:
// its thread is left out of perfscen's own CPU accounting (threadacct).
package wakeprobe

import (
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/threadacct"
	"golang.org/x/sys/unix"
)

// Period is how long the probe sleeps between two wake-ups.
const Period = 2 * time.Millisecond

// The histogram: bucket 0 holds delays under 1 µs; above, each power of
// two of microseconds is split into subBuckets equal parts, up to
// 2^maxPow µs (about 4.3 s), where the last bucket holds the rest.
const (
	subBuckets = 8
	maxPow     = 22
	NumBuckets = 1 + maxPow*subBuckets
)

// Snapshot is the probe's counts so far (or, after Sub, of an interval).
type Snapshot struct {
	Counts [NumBuckets]uint64
	// SumNs is the total delay, for the mean.
	SumNs uint64
	// KernelRuns and KernelNs are the runs of the fixed kernel (speed.go)
	// and the CPU time they took.
	KernelRuns, KernelNs uint64
	// KernelCPU are the same runs by the CPU they ran on, indexed by CPU
	// id (cpus.go); runs whose CPU is not known count above only.
	KernelCPU []KernelCount
}

// N is how many wake-ups the snapshot holds.
func (s *Snapshot) N() uint64 {
	var n uint64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Sub is the wake-ups between an earlier snapshot a and s.
func (s *Snapshot) Sub(a *Snapshot) Snapshot {
	var d Snapshot
	for i := range s.Counts {
		if s.Counts[i] >= a.Counts[i] {
			d.Counts[i] = s.Counts[i] - a.Counts[i]
		}
	}
	if s.SumNs >= a.SumNs {
		d.SumNs = s.SumNs - a.SumNs
	}
	if s.KernelRuns >= a.KernelRuns && s.KernelNs >= a.KernelNs {
		d.KernelRuns, d.KernelNs = s.KernelRuns-a.KernelRuns, s.KernelNs-a.KernelNs
	}
	if len(s.KernelCPU) > 0 {
		d.KernelCPU = make([]KernelCount, len(s.KernelCPU))
		for i, c := range s.KernelCPU {
			var p KernelCount
			if i < len(a.KernelCPU) {
				p = a.KernelCPU[i]
			}
			if c.Runs >= p.Runs && c.Ns >= p.Ns {
				d.KernelCPU[i] = KernelCount{Runs: c.Runs - p.Runs, Ns: c.Ns - p.Ns}
			}
		}
	}
	return d
}

// Add counts n wake-ups that each waited d: a machine's delays replayed
// (tests of a busy machine inject them this way; the probe itself counts
// its wake-ups one at a time, atomically).
func (s *Snapshot) Add(d time.Duration, n uint64) {
	ns := uint64(max(d, 0))
	s.Counts[bucketOf(ns)] += n
	s.SumNs += ns * n
}

// KernelUs is the mean CPU time of one run of the fixed kernel, in µs:
// how long a unit of fixed work took on this machine's CPUs (speed.go).
func (s *Snapshot) KernelUs() (float64, bool) {
	if s.KernelRuns == 0 {
		return 0, false
	}
	return float64(s.KernelNs) / 1e3 / float64(s.KernelRuns), true
}

// KernelUsOn is KernelUs for the runs on one CPU, with their count.
func (s *Snapshot) KernelUsOn(cpu int) (us float64, runs uint64) {
	if cpu < 0 || cpu >= len(s.KernelCPU) || s.KernelCPU[cpu].Runs == 0 {
		return 0, 0
	}
	c := s.KernelCPU[cpu]
	return float64(c.Ns) / 1e3 / float64(c.Runs), c.Runs
}

// Quantile is the delay at quantile q (0 < q < 1), in µs, read at the
// middle of its bucket; ok is false with no wake-up.
func (s *Snapshot) Quantile(q float64) (us float64, ok bool) {
	n := s.N()
	if n == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range s.Counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketBounds(i)
			return (lo + hi) / 2, true
		}
	}
	lo, hi := bucketBounds(NumBuckets - 1)
	return (lo + hi) / 2, true
}

// MeanUs is the mean delay in µs.
func (s *Snapshot) MeanUs() (float64, bool) {
	n := s.N()
	if n == 0 {
		return 0, false
	}
	return float64(s.SumNs) / 1e3 / float64(n), true
}

// bucketOf is the bucket of a delay of ns nanoseconds.
func bucketOf(ns uint64) int {
	us := float64(ns) / 1e3
	if us < 1 {
		return 0
	}
	pow := math.Floor(math.Log2(us))
	if pow >= maxPow {
		return NumBuckets - 1
	}
	base := math.Exp2(pow)
	sub := int((us - base) / base * subBuckets)
	sub = min(max(sub, 0), subBuckets-1)
	return 1 + int(pow)*subBuckets + sub
}

// bucketBounds is the range of delays (µs) bucket i holds.
func bucketBounds(i int) (lo, hi float64) {
	if i <= 0 {
		return 0, 1
	}
	pow, sub := (i-1)/subBuckets, (i-1)%subBuckets
	base := math.Exp2(float64(pow))
	step := base / subBuckets
	return base + float64(sub)*step, base + float64(sub+1)*step
}

// Probe is a running probe.
type Probe struct {
	counts     [NumBuckets]atomic.Uint64
	sumNs      atomic.Uint64
	kernelRuns atomic.Uint64
	kernelNs   atomic.Uint64
	// cpuRuns and cpuNs are the kernel's runs by CPU (cpus.go), sized
	// before the loop starts.
	cpuRuns, cpuNs []atomic.Uint64
	// samplers run after each kernel run (OnKernel).
	smu      sync.Mutex
	samplers map[int]func()
	nextID   int
	stop     chan struct{}
	done     chan struct{}
}

var (
	mu      sync.Mutex
	shared  *Probe
	users   int
	enabled atomic.Bool
)

// Enable lets Acquire start the probe; the perfscen command calls it
// first thing. Until then Acquire measures nothing: the probe's thread
// sleeps in the kernel, and a run inside a testing/synctest bubble (the
// CLI's and the engine's tests) would never see its fake clock advance
// past a goroutine in a system call.
func Enable() { enabled.Store(true) }

// Acquire starts the process's probe, or shares the running one; release
// stops it when its last user is done. ok is false until Enable, and where
// the kernel gives no per-thread schedstat (the probe then measures
// nothing).
func Acquire() (p *Probe, release func(), ok bool) {
	if !enabled.Load() {
		return nil, func() {}, false
	}
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		if _, err := os.Stat("/proc/thread-self/schedstat"); err != nil {
			return nil, func() {}, false
		}
		shared = start()
	}
	users++
	p = shared
	var once sync.Once
	return p, func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			users--
			if users == 0 && shared == p {
				close(p.stop)
				<-p.done
				shared = nil
			}
		})
	}, true
}

// OnKernel runs f on the probe's thread after each run of the kernel,
// every speedPeriod, until remove is called: a server's accounting
// samples there which CPU its threads ran on (internal/procacct), at the
// pace of the per-CPU kernel it will be divided by, on a thread whose
// time is not the client's.
func (p *Probe) OnKernel(f func()) (remove func()) {
	p.smu.Lock()
	defer p.smu.Unlock()
	if p.samplers == nil {
		p.samplers = map[int]func(){}
	}
	id := p.nextID
	p.nextID++
	p.samplers[id] = f
	return func() {
		p.smu.Lock()
		delete(p.samplers, id)
		p.smu.Unlock()
	}
}

func (p *Probe) runSamplers() {
	p.smu.Lock()
	fs := make([]func(), 0, len(p.samplers))
	for _, f := range p.samplers {
		fs = append(fs, f)
	}
	p.smu.Unlock()
	for _, f := range fs {
		f()
	}
}

func start() *Probe {
	p := &Probe{stop: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan struct{})
	go p.loop(ready)
	<-ready
	return p
}

// Snapshot reads the counts so far.
func (p *Probe) Snapshot() Snapshot {
	var s Snapshot
	for i := range s.Counts {
		s.Counts[i] = p.counts[i].Load()
	}
	s.SumNs = p.sumNs.Load()
	// Runs before time: a reading between the two adds errs towards a
	// slower kernel by at most one run's time over a window's ~10.
	s.KernelRuns = p.kernelRuns.Load()
	s.KernelNs = p.kernelNs.Load()
	if n := len(p.cpuRuns); n > 0 {
		s.KernelCPU = make([]KernelCount, n)
		for i := range s.KernelCPU {
			s.KernelCPU[i] = KernelCount{Runs: p.cpuRuns[i].Load(), Ns: p.cpuNs[i].Load()}
		}
	}
	return s
}

func (p *Probe) loop(ready chan<- struct{}) {
	defer close(p.done)
	// Locked to its thread (Exclude locks it), whose schedstat is then
	// the probe's own; its time is not perfscen's client work.
	done := threadacct.Exclude()
	defer done()
	rotor := newCPURotor()
	if w := rotor.width(); w > 0 {
		p.cpuRuns, p.cpuNs = make([]atomic.Uint64, w), make([]atomic.Uint64, w)
	}
	f, err := os.Open("/proc/thread-self/schedstat")
	close(ready)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 128)
	prev, ok := readWait(f, buf)
	if !ok {
		return
	}
	ts := unix.NsecToTimespec(int64(Period))
	kbuf := newKernelBuf()
	var speed speedClock
	if now, ok := monoNs(); ok {
		speed.last = now
	}
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		// A plain blocking syscall: the runtime hands this thread's P to
		// other goroutines while it sleeps.
		_ = unix.Nanosleep(&ts, nil)
		w, ok := readWait(f, buf)
		if !ok || w < prev {
			prev = w
			continue
		}
		d := w - prev
		prev = w
		p.counts[bucketOf(d)].Add(1)
		p.sumNs.Add(d)
		if now, ok := monoNs(); ok && speed.due(now) {
			if ns, cpu, ok := rotor.timeKernelOnNext(kbuf); ok {
				if cpu >= 0 && cpu < len(p.cpuRuns) {
					p.cpuNs[cpu].Add(ns)
					p.cpuRuns[cpu].Add(1)
				}
				p.kernelNs.Add(ns)
				p.kernelRuns.Add(1)
			}
			p.runSamplers()
			// The kernel's own run time must not count as the next
			// wake-up's delay: start the next delay from here.
			if w, ok := readWait(f, buf); ok {
				prev = w
			}
		}
	}
}

// readWait is the run-queue wait (ns) of the schedstat f holds.
func readWait(f *os.File, buf []byte) (uint64, bool) {
	n, err := f.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, false
	}
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 2 {
		return 0, false
	}
	w, err := strconv.ParseUint(fields[1], 10, 64)
	return w, err == nil
}
