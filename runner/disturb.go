package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perfscen/perfscen/internal/result"
)

// CPUSample is one reading of the machine's and this process's CPU
// counters, in clock ticks, and the 1-minute load average.
type CPUSample struct {
	Busy, Steal, Total uint64 // all CPUs, from /proc/stat
	Own                uint64 // this process, every thread (the embedded server included)
	Load1              float64
}

// ReadCPU samples /proc under root ("/proc" on Linux). ok is false where
// the files do not exist (other systems): no disturbance is recorded then.
func ReadCPU(root string) (s CPUSample, ok bool) {
	stat, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return s, false
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return s, false
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	s.Busy = v[0] + v[1] + v[2] + v[5] + v[6]
	s.Steal = v[7]
	s.Total = s.Busy + v[3] + v[4] + s.Steal
	if self, err := os.ReadFile(filepath.Join(root, "self", "stat")); err == nil {
		// Fields after the command name (which may hold spaces) start at
		// state; utime and stime are the 14th and 15th fields overall.
		if i := bytes.LastIndexByte(self, ')'); i >= 0 {
			rest := strings.Fields(string(self[i+1:]))
			if len(rest) > 12 {
				ut, _ := strconv.ParseUint(rest[11], 10, 64)
				st, _ := strconv.ParseUint(rest[12], 10, 64)
				s.Own = ut + st
			}
		}
	}
	if la, err := os.ReadFile(filepath.Join(root, "loadavg")); err == nil {
		if f := strings.Fields(string(la)); len(f) > 0 {
			s.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return s, true
}

// disturbance is how busy the machine was between two samples apart from
// this process: the share of all CPUs other processes used, the share
// stolen by the hypervisor, and the load average at the end. A server on
// the same machine but outside this process counts as another process;
// its baseline runs had it too, so comparisons stay like for like.
func disturbance(a, b CPUSample) *result.Disturbance {
	if b.Total <= a.Total {
		return nil
	}
	total := float64(b.Total - a.Total)
	busy := float64(b.Busy) - float64(a.Busy)
	own := float64(b.Own) - float64(a.Own)
	other := max(busy-own, 0) / total
	return &result.Disturbance{OtherCPU: min(other, 1), Steal: float64(b.Steal-a.Steal) / total, Load1: b.Load1}
}
