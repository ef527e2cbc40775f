package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/threadacct"
	"github.com/perfscen/perfscen/internal/wakeprobe"
	"github.com/perfscen/perfscen/runner/result"
)

// CPUSample is one reading of the machine's and this process's CPU
// counters, in clock ticks, and the 1-minute load average.
type CPUSample struct {
	Busy, Steal, Total uint64 // all CPUs, from /proc/stat
	Own                uint64 // this process, every thread (the embedded server included)
	Load1              float64
	// RunNs and WaitNs are this process's threads' time on a CPU and
	// (less the embedded server's spinning wake-up thread, threadacct)
	// time runnable but waiting for one (/proc/self/task/*/schedstat),
	// summed over the threads alive at the reading; HaveSched is false
	// where the files are absent (a kernel without schedstats).
	RunNs, WaitNs uint64
	HaveSched     bool
	// PressureUs is the machine's CPU pressure stall total ("some", µs,
	// /proc/pressure/cpu) and UptimeUs the wall clock it is read against
	// (/proc/uptime); HavePSI is false without PSI (older kernels, some
	// containers).
	PressureUs, UptimeUs uint64
	HavePSI              bool
	// Wake is the wake-up probe's counts so far (nil without a probe):
	// a window's wake-up delays are the difference of two readings.
	Wake *wakeprobe.Snapshot
}

// ReadCPU samples /proc under root ("/proc" on Linux). ok is false where
// /proc/stat cannot be read (other systems): no disturbance is recorded
// then. The other files are optional, each signal recorded where present.
func ReadCPU(root string) (s CPUSample, ok bool) {
	stat, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return s, false
	}
	if s.Busy, s.Steal, s.Total, ok = parseProcStat(stat); !ok {
		return s, false
	}
	if self, err := os.ReadFile(filepath.Join(root, "self", "stat")); err == nil {
		s.Own, _ = parseSelfStat(self)
	}
	if la, err := os.ReadFile(filepath.Join(root, "loadavg")); err == nil {
		s.Load1, _ = parseLoadavg(la)
	}
	s.RunNs, s.WaitNs, s.HaveSched = readSchedstat(filepath.Join(root, "self", "task"))
	if s.HaveSched && root == "/proc" {
		// The embedded server's spinning wake-up thread is not the
		// client: its time is left out (threadacct).
		r, w := threadacct.Excluded()
		s.RunNs, s.WaitNs = s.RunNs-min(r, s.RunNs), s.WaitNs-min(w, s.WaitNs)
	}
	if psi, err := os.ReadFile(filepath.Join(root, "pressure", "cpu")); err == nil {
		if up, err := os.ReadFile(filepath.Join(root, "uptime")); err == nil {
			var okP, okU bool
			s.PressureUs, okP = parsePressureSome(psi)
			s.UptimeUs, okU = parseUptime(up)
			s.HavePSI = okP && okU
		}
	}
	return s, true
}

// readSchedstat sums the run and wait times of every thread under dir.
// A thread that exits between two readings takes its times with it; the
// sums then go backwards and disturbance records no wait for that window.
func readSchedstat(dir string) (run, wait uint64, ok bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, false
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited since the listing
		}
		r, w, good := parseSchedstat(b)
		if !good {
			return 0, 0, false
		}
		run, wait, ok = run+r, wait+w, true
	}
	return run, wait, ok
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat.
func parseProcStat(b []byte) (busy, steal, total uint64, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, false
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil || n > 1<<56 { // no real counter is near overflowing a sum
			return 0, 0, 0, false
		}
		v[i] = n
	}
	busy = v[0] + v[1] + v[2] + v[5] + v[6]
	steal = v[7]
	return busy, steal, busy + v[3] + v[4] + steal, true
}

// parseSelfStat returns utime+stime of /proc/self/stat. Fields after the
// command name (which may hold spaces and parentheses) start at state;
// utime and stime are the 14th and 15th fields overall.
func parseSelfStat(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	rest := strings.Fields(string(b[i+1:]))
	if len(rest) <= 12 {
		return 0, false
	}
	ut, err1 := strconv.ParseUint(rest[11], 10, 64)
	st, err2 := strconv.ParseUint(rest[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ut + st, true
}

// parseLoadavg returns the 1-minute load average.
func parseLoadavg(b []byte) (float64, bool) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 || v != v {
		return 0, false
	}
	return v, true
}

// parseSchedstat reads a thread's schedstat: time on a CPU (ns), time
// runnable waiting for a CPU (ns), timeslices.
func parseSchedstat(b []byte) (run, wait uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	run, err1 := strconv.ParseUint(f[0], 10, 64)
	wait, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return run, wait, true
}

// parsePressureSome returns the "some" line's total of /proc/pressure/cpu:
// µs during which at least one runnable task waited for a CPU.
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=12345
func parsePressureSome(b []byte) (uint64, bool) {
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, found := strings.CutPrefix(kv, "total="); found {
				n, err := strconv.ParseUint(v, 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	}
	return 0, false
}

// parseUptime returns /proc/uptime's first field (seconds, two decimals)
// in µs, read as a decimal so no float rounding enters a difference.
func parseUptime(b []byte) (uint64, bool) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	whole, frac, _ := strings.Cut(f[0], ".")
	s, err := strconv.ParseUint(whole, 10, 64)
	if err != nil || s > 1<<40 || len(frac) > 6 {
		return 0, false
	}
	us := s * 1e6
	if frac != "" {
		n, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return 0, false
		}
		for i := len(frac); i < 6; i++ {
			n *= 10
		}
		us += n
	}
	return us, true
}

// disturbance is how busy the machine was between two samples apart from
// this process: the share of all CPUs other processes used, the share
// stolen by the hypervisor, the load average at the end, and the
// contention this process itself met: its threads' run-queue wait per unit
// of run time, and the machine's CPU pressure. A server on the same
// machine but outside this process counts as another process; its
// baseline runs had it too, so comparisons stay like for like.
func disturbance(a, b CPUSample) *result.Disturbance {
	if b.Total <= a.Total {
		return nil
	}
	total := float64(b.Total - a.Total)
	busy := float64(b.Busy) - float64(a.Busy)
	own := float64(b.Own) - float64(a.Own)
	other := max(busy-own, 0) / total
	d := &result.Disturbance{OtherCPU: min(other, 1), Steal: float64(b.Steal-a.Steal) / total, Load1: b.Load1}
	// A thread exit makes the sums go backwards: no reading then.
	if a.HaveSched && b.HaveSched && b.RunNs > a.RunNs && b.WaitNs >= a.WaitNs {
		w := float64(b.WaitNs-a.WaitNs) / float64(b.RunNs-a.RunNs)
		d.RunQueueWait = &w
	}
	if a.HavePSI && b.HavePSI && b.UptimeUs > a.UptimeUs && b.PressureUs >= a.PressureUs {
		p := min(float64(b.PressureUs-a.PressureUs)/float64(b.UptimeUs-a.UptimeUs), 1)
		d.CPUPressure = &p
	}
	d.WakeupDelay = wakeupDelay(a.Wake, b.Wake)
	if a.Wake != nil && b.Wake != nil {
		w := b.Wake.Sub(a.Wake)
		if us, ok := w.KernelUs(); ok && w.KernelRuns >= minKernelRuns {
			d.GEMVUs = &us
			d.GEMVUsByCPU = kernelByCPU(&w)
		}
	}
	return d
}

// minKernelRunsCPU is the fewest runs on one CPU its own kernel time is
// taken from: a 1 s window on two CPUs has five each.
const minKernelRunsCPU = 2

// kernelByCPU is each CPU's mean kernel time in a window, 0 where it ran
// fewer than minKernelRunsCPU times; nil where no CPU has one.
func kernelByCPU(w *wakeprobe.Snapshot) []float64 {
	var out []float64
	for c := range w.KernelCPU {
		if us, runs := w.KernelUsOn(c); runs >= minKernelRunsCPU && us > 0 {
			for len(out) <= c {
				out = append(out, 0)
			}
			out[c] = us
		}
	}
	return out
}

// minKernelRuns is the fewest runs of the probe's kernel a window's CPU
// speed is taken from (one every 100 ms: a 500 ms window has 5).
const minKernelRuns = 5

// withWork sets a window's work per inference: its CPU time per
// inference in units of the fixed kernel's CPU time in the same seconds.
// Where the server's CPU time was shared out by CPU and the kernel timed
// on each, each CPU's share is divided by that CPU's own kernel time: a
// vCPU's speed moves on its own, and the kernel's time on the CPU the
// server left idle says nothing of the one it ran on (internal/wakeprobe,
// cpus.go). The shares are the sampled split's proportions, applied to
// the window's whole CPU time (the samples' edges are not the window's);
// a CPU without its own kernel time takes the machine-wide one.
func withWork(p *result.ProcessStats, d *result.Disturbance) {
	if p == nil || d == nil || d.GEMVUs == nil || *d.GEMVUs <= 0 {
		return
	}
	w, byCPU := workUnits(p.CPUUs, p.CPUUsByCPU, *d.GEMVUs, d.GEMVUsByCPU)
	p.Work, p.WorkByCPU = &w, byCPU
}

// workUnits is CPU time cpuUs in kernel units: split by the shares of
// split over each CPU's kernel time byCPU (overall where a CPU has none).
// byCPUUsed says whether any CPU's own kernel time was used.
func workUnits(cpuUs float64, split []float64, overall float64, byCPU []float64) (units float64, byCPUUsed bool) {
	var total float64
	for _, v := range split {
		total += max(v, 0)
	}
	if total <= 0 {
		return cpuUs / overall, false
	}
	var perUs float64 // units per µs of CPU time, weighted by the shares
	for c, v := range split {
		if v <= 0 {
			continue
		}
		k := overall
		if c < len(byCPU) && byCPU[c] > 0 {
			k, byCPUUsed = byCPU[c], true
		}
		perUs += v / total / k
	}
	return cpuUs * perUs, byCPUUsed
}

// wakeupDelay summarizes the probe's wake-ups between two readings; nil
// without a probe, or with too few wake-ups for a tail (a window shorter
// than a few hundred milliseconds).
func wakeupDelay(a, b *wakeprobe.Snapshot) *result.WakeupDelay {
	if a == nil || b == nil {
		return nil
	}
	d := b.Sub(a)
	if d.N() < minWakeups {
		return nil
	}
	w := &result.WakeupDelay{N: d.N()}
	w.Mean, _ = d.MeanUs()
	for i, c := range d.Counts {
		if c > 0 {
			w.Buckets = append(w.Buckets, [2]uint64{uint64(i), c})
		}
	}
	for _, q := range result.WakeupQuantiles {
		v, _ := d.Quantile(q)
		w.Quantiles = append(w.Quantiles, v)
	}
	return w
}

// minWakeups is the fewest wake-ups a window's delays are summarized from.
const minWakeups = 100

// sentinelNotes say which contention signals this machine cannot give, so
// a reader knows why the disturbed-testbed rule did not use them.
func sentinelNotes(s CPUSample) []string {
	var out []string
	if !s.HaveSched {
		out = append(out, "disturbance sentinel: /proc/self/task/*/schedstat is not readable here, so perfscen's own run-queue wait is not recorded; the disturbed-testbed rule uses the other processes' CPU share alone")
	}
	if !s.HavePSI {
		out = append(out, "disturbance sentinel: /proc/pressure/cpu is absent (a kernel without PSI, or a container that hides it), so CPU pressure is not recorded")
	}
	return out
}
