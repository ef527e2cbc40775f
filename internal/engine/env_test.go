package engine

import (
	"os"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

func TestDerivedTestbedIgnoresHostname(t *testing.T) {
	base := result.Environment{Host: "ci-runner-7f9c", CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 16,
		GPUModel: "NVIDIA A10", GPUCount: 2, Server: result.ServerInfo{Name: "triton", Version: "2.50"}}
	id := result.DerivedTestbed(base)
	other := base
	other.Host, other.GPU = "ci-runner-0a1b", "GPU-3333,GPU-4444"
	if got := result.DerivedTestbed(other); got != id {
		t.Errorf("a new hostname or GPU UUIDs changed the testbed: %s vs %s", got, id)
	}
	for name, change := range map[string]func(*result.Environment){
		"cpu model":      func(e *result.Environment) { e.CPU = "Intel Xeon" },
		"core count":     func(e *result.Environment) { e.NumCPU = 4 },
		"memory":         func(e *result.Environment) { e.MemoryGiB = 32 },
		"gpu model":      func(e *result.Environment) { e.GPUModel = "NVIDIA H100" },
		"gpu count":      func(e *result.Environment) { e.GPUCount = 1 },
		"server name":    func(e *result.Environment) { e.Server.Name = "perfscen-refserver" },
		"server version": func(e *result.Environment) { e.Server.Version = "2.51" },
	} {
		e := base
		change(&e)
		if result.DerivedTestbed(e) == id {
			t.Errorf("%s does not change the testbed", name)
		}
	}
}

func TestHostFacts(t *testing.T) {
	if got := memoryGiB("testdata/meminfo"); got != 16 {
		t.Errorf("memoryGiB = %d, want 16", got)
	}
	if got := memoryGiB("testdata/none"); got != 0 {
		t.Errorf("memoryGiB of a missing file = %d, want 0", got)
	}
	model, n := localGPUs("testdata/nvidia")
	if model != "NVIDIA A10" || n != 2 {
		t.Errorf("localGPUs = %q, %d; want NVIDIA A10, 2", model, n)
	}
	if model, n := localGPUs("testdata/none"); model != "" || n != 0 {
		t.Errorf("localGPUs of a missing dir = %q, %d", model, n)
	}
	// Captured verbatim from an H100 machine (driver 580.159.04): the real
	// file separates key and value with tabs and carries the UUID, which
	// must not reach the testbed.
	if model, n := localGPUs("testdata/nvidia-h100"); model != "NVIDIA H100 80GB HBM3" || n != 1 {
		t.Errorf("localGPUs of the H100 capture = %q, %d", model, n)
	}
}

// On a machine with NVIDIA GPUs, the driver's own files must be read: a
// GPU runner whose testbed silently lacked its GPU would share history
// with a CPU-only machine of the same CPU. Skipped where there is none.
func TestLocalGPUsOnThisMachine(t *testing.T) {
	const dir = "/proc/driver/nvidia/gpus"
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Skip("no NVIDIA driver on this machine")
	}
	model, n := localGPUs(dir)
	if model == "" || n != len(entries) {
		t.Errorf("localGPUs(%s) = %q, %d; the driver lists %d GPU(s)", dir, model, n, len(entries))
	}
	env := result.Environment{CPU: "x", NumCPU: 1}
	withGPU := env
	withGPU.GPUModel, withGPU.GPUCount = model, n
	if result.DerivedTestbed(env) == result.DerivedTestbed(withGPU) {
		t.Error("the derived testbed does not change with the GPUs")
	}
	t.Logf("GPUs: %d× %s", n, model)
}

func TestNamedTestbedWins(t *testing.T) {
	e := result.Environment{CPU: "x"}
	setTestbed(&e, TestbedName{Name: "ci-gpu", Source: "env"})
	if e.Testbed != "ci-gpu" || e.TestbedSource != "env" {
		t.Errorf("named testbed not used: %+v", e)
	}
	setTestbed(&e, TestbedName{})
	if e.Testbed != result.DerivedTestbed(e) || e.TestbedSource != "derived" {
		t.Errorf("derived testbed not used: %+v", e)
	}
}

// With several servers each server's key, name and version are part of
// the derived testbed, so two runs are filed together only when every
// server is the same; the id of a one-server run is what it always was.
func TestDerivedTestbedOfSeveralServers(t *testing.T) {
	one := result.Environment{CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 16, Server: result.ServerInfo{Name: "triton", Version: "2.50"}}
	if got, want := result.DerivedTestbed(one), "hw-f1edd147a502"; got != want { // sha256 of the fields joined by NUL, as before servers
		t.Errorf("one-server testbed %s, want the id it always had, %s", got, want)
	}
	two := result.Environment{CPU: "AMD EPYC", NumCPU: 2, MemoryGiB: 16, Servers: []result.ServerInfo{
		{Key: "candidate", Name: "triton", Version: "2.51"}, {Key: "released", Name: "triton", Version: "2.50"}}}
	id := result.DerivedTestbed(two)
	if id == result.DerivedTestbed(one) {
		t.Error("two servers share the one-server testbed")
	}
	for name, change := range map[string]func(*result.Environment){
		"candidate version": func(e *result.Environment) { e.Servers[0].Version = "2.52" },
		"released name":     func(e *result.Environment) { e.Servers[1].Name = "perfscen-refserver" },
		"server key":        func(e *result.Environment) { e.Servers[0].Key = "nightly" },
		"a third server":    func(e *result.Environment) { e.Servers = append(e.Servers, result.ServerInfo{Key: "x"}) },
	} {
		e := two
		e.Servers = append([]result.ServerInfo(nil), two.Servers...)
		change(&e)
		if result.DerivedTestbed(e) == id {
			t.Errorf("%s does not change the testbed", name)
		}
	}
}

// A hypervisor names every EPYC generation "AMD EPYC"; the family, model,
// stepping and cache sizes it passes through tell them apart. Only the
// first CPU's block is read, and microcode and clock are left out (a
// host's microcode update or a clock reading is not a new machine).
func TestCPUIdentity(t *testing.T) {
	for _, tt := range []struct {
		name, cpuinfo, caches, want string
	}{
		{"x86 with caches", "testdata/cpu-epyc/cpuinfo", "testdata/cpu-epyc/cache",
			"vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1; L1d 32K L1i 32K L2 1024K L3 32768K"},
		{"x86 without sysfs", "testdata/cpu-epyc/cpuinfo", "testdata/none",
			"vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1"},
		{"arm", "testdata/cpu-arm/cpuinfo", "testdata/none",
			"CPU implementer=0x41 CPU part=0xd0c CPU variant=0x3 CPU revision=1"},
		{"caches only", "testdata/none", "testdata/cpu-epyc/cache", "L1d 32K L1i 32K L2 1024K L3 32768K"},
		{"nothing", "testdata/none", "testdata/none", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cpuIdentity(tt.cpuinfo, tt.caches); got != tt.want {
				t.Errorf("cpuIdentity = %q\nwant          %q", got, tt.want)
			}
		})
	}
}
