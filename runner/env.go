package runner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/client"
	"github.com/perfscen/perfscen/internal/kserve"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
)

// environment describes the client host and asks the server who it is,
// unless md already says. A server that does not answer its metadata
// endpoint cannot be measured. named, when set, is the testbed the caller
// chose (--testbed, PERFSCEN_TESTBED or the scenario); otherwise the
// testbed is derived from the hardware and the server.
func environment(ctx context.Context, p *plan.Plan, c client.Client, md *kserve.ServerMetadata, version string, named TestbedName) (result.Environment, error) {
	host, _ := os.Hostname()
	env := result.Environment{
		PerfscenVersion: version, Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPU: cpuModel("/proc/cpuinfo"), NumCPU: runtime.NumCPU(), MemoryGiB: memoryGiB("/proc/meminfo"),
		Server: result.ServerInfo{URL: p.Server.URL, Embedded: p.Server.Embedded},
	}
	env.GPUModel, env.GPUCount = localGPUs("/proc/driver/nvidia/gpus")
	var err error
	if md == nil {
		mctx, cancel := context.WithTimeout(ctx, metadataTimeout(p.Server.Timeout))
		defer cancel()
		md, err = c.ServerMetadata(mctx)
	}
	if err == nil {
		env.Server.Name, env.Server.Version = md.Name, md.Version
		env.Server.Extensions = append([]string(nil), md.Extensions...)
	}
	setTestbed(&env, named)
	if err != nil {
		return env, fmt.Errorf("reading server metadata: %w", err)
	}
	return env, nil
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

func metadataTimeout(t time.Duration) time.Duration {
	if t > 0 {
		return t
	}
	return 30 * time.Second
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
// autoscaled runner of one machine type.
func DerivedTestbed(e result.Environment) string {
	key := strings.Join([]string{e.CPU, strconv.Itoa(e.NumCPU), strconv.Itoa(e.MemoryGiB), e.GPUModel,
		strconv.Itoa(e.GPUCount), e.Server.Name, e.Server.Version}, "\x00")
	h := sha256.Sum256([]byte(key))
	return "hw-" + hex.EncodeToString(h[:6])
}
