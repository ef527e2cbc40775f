package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
)

// Capacity is what this machine gives the workers of one process: the
// memory available (/proc/meminfo MemAvailable) and the open-file limit
// (RLIMIT_NOFILE, which Go raises to its hard limit at start). Zero is
// unknown, and not checked.
type Capacity struct {
	MemAvailable int64
	OpenFiles    int64
}

// MachineCapacity reads this machine's Capacity.
func MachineCapacity() Capacity {
	var c Capacity
	if kib := meminfoKiB("/proc/meminfo", "MemAvailable:"); kib > 0 {
		c.MemAvailable = kib << 10
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < 1<<62 {
		c.OpenFiles = int64(rl.Cur)
	}
	return c
}

// spareFiles are the files a run holds besides its workers' connections:
// listeners, the embedded server's own, results, shared memory, pipes.
const spareFiles = 64

// CheckWorkers refuses a plan whose busiest moment needs more workers
// than c can hold: their memory (plan.WorkerBytes each) beyond what is
// available, or their connections beyond the open-file limit. What a
// point needs at most is its concurrency (a ramp's top, a request_rate
// point's max_threads); points that run together (a mix) add up. A
// connection is counted for each worker of kind kserve (a connection of
// its own by default, over both protocols) and over HTTP (one request a
// connection), two when the embedded server serves it from this process.
// The plan's scenario is what cannot run here: exit 2.
func CheckWorkers(p *plan.Plan, c Capacity) error {
	var worst plan.Point
	most, conns := 0, 0
	together := map[int]int{}
	togetherConns := map[int]int{}
	for _, pt := range p.Points {
		n := pt.Load.Concurrency
		if pt.Load.Mode == plan.LoadRequestRate {
			n = pt.Load.MaxThreads // else the engine's own cap, growCap
			if n <= 0 {
				n = growCap
			}
		}
		if pt.Stage != nil && pt.Load.Mode != plan.LoadRequestRate {
			n = max(n, int(pt.Stage.To), int(pt.Stage.From))
		}
		k := n * connsPerWorker(p, pt)
		if pt.Together != 0 {
			together[pt.Together] += n
			togetherConns[pt.Together] += k
			n, k = together[pt.Together], togetherConns[pt.Together]
		}
		if n > most {
			worst, most = pt, n
		}
		conns = max(conns, k)
	}
	if most == 0 {
		return nil
	}
	need := int64(most) * plan.WorkerBytes
	if c.MemAvailable > 0 && need > c.MemAvailable {
		return failure.Invalid(fmt.Errorf("point %s keeps %d requests outstanding: its workers need about %s (%s each), and this machine has %s available; lower the concurrency or spread it over agents (perfscen run --agents)",
			worst.ID, most, numfmt.Bytes(float64(need)), numfmt.Bytes(plan.WorkerBytes), numfmt.Bytes(float64(c.MemAvailable))))
	}
	if c.OpenFiles > 0 && int64(conns+spareFiles) > c.OpenFiles {
		return failure.Invalid(fmt.Errorf("the load needs up to %d connections at once (a connection a worker, and the embedded server's end of each in this process), and the open-file limit is %d (ulimit -n); raise it, lower the concurrency, or spread it over agents (perfscen run --agents)",
			conns, c.OpenFiles))
	}
	return nil
}

func connsPerWorker(p *plan.Plan, pt plan.Point) int {
	srv := p.Server()
	for _, s := range p.Servers {
		if pt.Server != "" && s.Name == pt.Server {
			srv = s
		}
	}
	kind := srv.Kind
	if kind != "" && kind != plan.KindKServe && pt.Protocol != plan.ProtocolHTTP {
		return 0 // a kind of its own over gRPC multiplexes its calls
	}
	if srv.Embedded {
		return 2
	}
	return 1
}

// meminfoKiB is key's value in /proc/meminfo (in KiB), 0 when unknown.
func meminfoKiB(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if v, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return v
				}
			}
		}
	}
	return 0
}
