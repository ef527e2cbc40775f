package engine

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// environment describes the client host and the servers, as their kinds
// found them. named, when set, is the testbed the caller chose (--testbed,
// PERFSCEN_TESTBED or the scenario); otherwise the testbed is derived from
// the hardware and the server.
//
// With several servers each is described in Servers, by its scenario key,
// and Server stays empty.
func environment(p *plan.Plan, servers []*serverState, version string, named TestbedName) result.Environment {
	host, _ := os.Hostname()
	env := result.Environment{
		PerfscenVersion: version, Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPU: cpuModel("/proc/cpuinfo"), CPUID: cpuIdentity("/proc/cpuinfo", "/sys/devices/system/cpu/cpu0/cache"),
		NumCPU: runtime.NumCPU(), MemoryGiB: memoryGiB("/proc/meminfo"),
	}
	env.GPUModel, env.GPUCount = localGPUs("/proc/driver/nvidia/gpus")
	for _, ss := range servers {
		info := ss.server.Info()
		info.Key = ss.srv.Name
		if !p.Named() {
			env.Server = info
		} else {
			env.Servers = append(env.Servers, info)
		}
	}
	setTestbed(&env, named)
	return env
}

// TestbedName is a testbed chosen by name and where the name came from
// ("flag", "env", "scenario").
type TestbedName struct {
	Name, Source string
}

func setTestbed(env *result.Environment, named TestbedName) {
	if named.Name != "" {
		env.Testbed, env.TestbedSource = named.Name, named.Source
		return
	}
	env.Testbed, env.TestbedSource = result.DerivedTestbed(*env), "derived"
}

// cpuModel reads the first "model name" from a cpuinfo file; "" when absent.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cpuIdentityKeys are the /proc/cpuinfo fields that identify a CPU's
// design where its model name may not (x86: vendor, family, model,
// stepping; Arm: implementer, part, variant, revision).
var cpuIdentityKeys = []string{"vendor_id", "cpu family", "model", "stepping",
	"CPU implementer", "CPU part", "CPU variant", "CPU revision"}

// cpuIdentity is the first CPU's identity from a cpuinfo file and its
// caches from a sysfs cache directory, e.g. "vendor_id=AuthenticAMD cpu
// family=25 model=17 stepping=1; L1d 32K L1i 32K L2 1024K L3 32768K";
// "" when neither can be read. A hypervisor that names every EPYC "AMD
// EPYC" still passes the family and the cache sizes through, and those
// decide a CPU-bound model's figures: the same model's CPU time per
// inference, over the probe's kernel, moved in opposite directions with
// the machine's state on two generations (docs/statistics.md). Microcode
// and flags are left out: a host's microcode update is not a new machine.
func cpuIdentity(cpuinfo, cacheDir string) string {
	var ids []string
	if f, err := os.Open(cpuinfo); err == nil {
		seen := map[string]string{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if strings.TrimSpace(line) == "" && len(seen) > 0 {
				break // the first CPU's block only
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			k = strings.TrimSpace(k)
			if _, dup := seen[k]; !dup {
				seen[k] = printable(v)
			}
		}
		f.Close()
		for _, k := range cpuIdentityKeys {
			if v := seen[k]; v != "" {
				ids = append(ids, k+"="+v)
			}
		}
	}
	caches := cacheSizes(cacheDir)
	switch {
	case len(ids) == 0 && caches == "":
		return ""
	case caches == "":
		return strings.Join(ids, " ")
	case len(ids) == 0:
		return caches
	}
	return strings.Join(ids, " ") + "; " + caches
}

// printable is v with runs of spaces and control characters made one
// space: the identity is one line of a baseline file and of `baseline
// show`, whatever a hypervisor writes into cpuinfo.
func printable(v string) string {
	return strings.Join(strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// cacheSizes lists a sysfs cache directory's caches by level and type,
// in level order ("L1d 32K L1i 32K L2 1024K L3 32768K"); "" when none.
func cacheSizes(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	type cache struct{ level, name, size string }
	var cs []cache
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(f string) string {
			b, err := os.ReadFile(filepath.Join(dir, e.Name(), f))
			if err != nil {
				return ""
			}
			return strings.TrimSpace(string(b))
		}
		level, typ, size := read("level"), read("type"), read("size")
		if level == "" || size == "" {
			continue
		}
		name := "L" + level
		switch typ {
		case "Data":
			name += "d"
		case "Instruction":
			name += "i"
		}
		cs = append(cs, cache{level, name, size})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].level != cs[j].level {
			return cs[i].level < cs[j].level
		}
		return cs[i].name < cs[j].name
	})
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.name + " " + c.size
	}
	return strings.Join(parts, " ")
}

// memoryGiB is MemTotal from a meminfo file, rounded to whole GiB so the
// few MiB the kernel reserves differently from boot to boot do not change
// the testbed; 0 when unknown.
func memoryGiB(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "MemTotal" {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			return 0
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0
		}
		return int(math.Round(kb / (1 << 20)))
	}
	return 0
}

// localGPUs reads the NVIDIA driver's per-GPU information files: the
// model names (joined, sorted, duplicates once) and the count. Device
// UUIDs are deliberately not used: a replaced or rescheduled GPU of the
// same model is the same testbed.
func localGPUs(dir string) (string, int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", 0
	}
	models := map[string]bool{}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "information"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == "Model" {
				models[strings.TrimSpace(v)] = true
				n++
				break
			}
		}
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	return strings.Join(names, ","), n
}
