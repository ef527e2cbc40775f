package engine

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

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
		CPU: cpuModel("/proc/cpuinfo"), NumCPU: runtime.NumCPU(), MemoryGiB: memoryGiB("/proc/meminfo"),
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
	env.Testbed, env.TestbedSource = DerivedTestbed(*env), "derived"
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

// DerivedTestbed is the default testbed: a stable id of what decides the
// figures (CPU model and count, memory, GPU model and count, server name
// and version) and never the hostname, which changes with every pod or
// autoscaled runner of one machine type. With several servers every
// server's scenario key, name and version go in, in key order: each one
// decides the figures of its own points.
func DerivedTestbed(e result.Environment) string {
	parts := []string{e.CPU, strconv.Itoa(e.NumCPU), strconv.Itoa(e.MemoryGiB), e.GPUModel,
		strconv.Itoa(e.GPUCount), e.Server.Name, e.Server.Version}
	for _, s := range e.Servers {
		parts = append(parts, s.Key, s.Name, s.Version)
	}
	key := strings.Join(parts, "\x00")
	h := sha256.Sum256([]byte(key))
	return "hw-" + hex.EncodeToString(h[:6])
}
