package runner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/client"
	"github.com/perfscen/perfscen/internal/plan"
	"github.com/perfscen/perfscen/internal/result"
)

// environment describes the client host and asks the server who it is. A
// server that does not answer its metadata endpoint cannot be measured.
func environment(ctx context.Context, p *plan.Plan, c client.Client, version string) (result.Environment, error) {
	host, _ := os.Hostname()
	env := result.Environment{
		PerfscenVersion: version, Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPU: cpuModel("/proc/cpuinfo"), NumCPU: runtime.NumCPU(),
		Server: result.ServerInfo{URL: p.Server.URL, Embedded: p.Server.Embedded},
	}
	mctx, cancel := context.WithTimeout(ctx, metadataTimeout(p.Server.Timeout))
	defer cancel()
	md, err := c.ServerMetadata(mctx)
	if err != nil {
		env.Testbed = testbed(env)
		return env, fmt.Errorf("reading server metadata: %w", err)
	}
	env.Server.Name, env.Server.Version = md.Name, md.Version
	env.Server.Extensions = append([]string(nil), md.Extensions...)
	env.Testbed = testbed(env)
	return env, nil
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

// testbed is a short stable id of the machine and server, so baselines are
// never compared across testbeds silently.
func testbed(e result.Environment) string {
	h := sha256.Sum256([]byte(strings.Join([]string{e.Host, e.CPU, e.GPU, e.Server.Name, e.Server.Version}, "\x00")))
	return hex.EncodeToString(h[:6])
}
