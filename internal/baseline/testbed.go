package baseline

import (
	"fmt"
	"regexp"

	"github.com/perfscen/perfscen/runner/result"
)

// legacyID matches the testbed ids perfscen derived before testbeds were
// named: a hash that included the hostname.
var legacyID = regexp.MustCompile(`^[0-9a-f]{12}$`)

// Lookup returns the history a run is gated against and its key. A run
// filed under a derived testbed also finds a legacy testbed (keyed by a
// hostname hash) recorded on the same hardware and server, so histories
// recorded before the change keep gating on any hostname; from names the
// legacy key then ("" otherwise). Likewise a derived testbed recorded
// before the CPU's identity was part of the id (PreIdentity).
func (f *File) Lookup(run *result.Run) (tb *Testbed, id, from string) {
	id = TestbedID(run)
	if tb := f.Testbeds[id]; tb != nil {
		return tb, id, ""
	}
	if run.Environment.TestbedSource != "derived" {
		return nil, id, ""
	}
	if run.Environment.CPUID != "" {
		// A history filed before the CPU's identity was recorded: the
		// same CPU name, cores, memory and server, perhaps another
		// generation of CPU under that name (PreIdentity says so).
		pre := result.PreIdentityTestbed(run.Environment)
		if t := f.Testbeds[pre]; t != nil && pre != id && t.Environment.CPUID == "" {
			return t, id, pre
		}
	}
	var match string
	for _, k := range f.TestbedIDs() {
		t := f.Testbeds[k]
		if legacyID.MatchString(k) && t.Environment.TestbedSource == "" && sameHardware(t.Environment, run.Environment) {
			if match != "" {
				return nil, id, "" // ambiguous: never guess
			}
			match = k
		}
	}
	if match == "" {
		return nil, id, ""
	}
	return f.Testbeds[match], id, match
}

// sameHardware compares what a legacy testbed recorded of the machine and
// server; the hostname is ignored on purpose.
func sameHardware(a, b result.Environment) bool {
	return a.CPU == b.CPU && a.NumCPU == b.NumCPU && a.Server.Name == b.Server.Name &&
		a.Server.Version == b.Server.Version && (a.GPU == "") == (b.GPU == "" && b.GPUCount == 0)
}

// RunCounts lists each testbed with its number of history runs, sorted by
// name, for messages that say where a baseline was recorded.
func (f *File) RunCounts() string {
	s := ""
	for i, id := range f.TestbedIDs() {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s (%d run(s))", id, len(f.Testbeds[id].Runs))
	}
	return s
}

// PreIdentity says whether a history found under key from (Lookup) was
// filed before perfscen recorded the CPU's identity: it was recorded on a
// CPU of the same name, which may not be the same CPU.
func PreIdentity(from string, run *result.Run) bool {
	return from != "" && run.Environment.CPUID != "" && from == result.PreIdentityTestbed(run.Environment)
}
