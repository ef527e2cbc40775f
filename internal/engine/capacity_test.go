package engine

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
)

// A plan whose busiest moment needs more memory than the machine has, or
// more connections than it may open, cannot run: exit 2, naming what it
// needs and what there is.
func TestCheckWorkers(t *testing.T) {
	conc := func(id string, n int) plan.Point {
		return plan.Point{ID: id, Model: "m", Protocol: plan.ProtocolHTTP, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: n}}
	}
	mix := func(id string, n, together int) plan.Point {
		p := conc(id, n)
		p.Together = together
		return p
	}
	rate := plan.Point{ID: "m/r=10", Model: "m", Protocol: plan.ProtocolGRPC, Load: plan.Load{Mode: plan.LoadRequestRate, Rate: 10, MaxThreads: 9000}}
	ramp := conc("m/stage=1", 0)
	ramp.Stage = &plan.Stage{Index: 1, From: 0, To: 30000}
	embedded := []plan.Server{{Embedded: true}}
	remote := []plan.Server{{URL: "h:8000"}}
	grpcKind := []plan.Server{{URL: "h:50051", Kind: "grpc"}}
	big := Capacity{MemAvailable: 16 << 30, OpenFiles: 1 << 20}
	tests := []struct {
		name    string
		servers []plan.Server
		points  []plan.Point
		c       Capacity
		want    string // "" runs
	}{
		{"fits", remote, []plan.Point{conc("m/c=1", 1), conc("m/c=4000", 4000)}, big, ""},
		{"memory", remote, []plan.Point{conc("m/c=1", 1), conc("m/c=60000", 60000)}, Capacity{MemAvailable: 1 << 30},
			"point m/c=60000 keeps 60000 requests outstanding: its workers need about 3.66 GiB (64 KiB each), and this machine has 1 GiB available"},
		{"a mix adds up", remote, []plan.Point{mix("a/c=3000", 3000, 1), mix("b/c=3000", 3000, 1)}, Capacity{MemAvailable: 256 << 20},
			"point b/c=3000 keeps 6000 requests outstanding: its workers need about 375 MiB"},
		{"a ramp's top", remote, []plan.Point{ramp}, Capacity{MemAvailable: 1 << 30}, "keeps 30000 requests outstanding"},
		{"request rate's max_threads", remote, []plan.Point{rate}, Capacity{MemAvailable: 256 << 20}, "point m/r=10 keeps 9000 requests outstanding"},
		{"open files", remote, []plan.Point{conc("m/c=5000", 5000)}, Capacity{MemAvailable: 16 << 30, OpenFiles: 4096},
			"the load needs up to 5000 connections at once (a connection a worker, and the embedded server's end of each in this process), and the open-file limit is 4096 (ulimit -n)"},
		{"the embedded server's ends too", embedded, []plan.Point{conc("m/c=3000", 3000)}, Capacity{OpenFiles: 4096}, "needs up to 6000 connections"},
		{"a gRPC kind multiplexes", grpcKind, []plan.Point{func() plan.Point { p := conc("m/c=5000", 5000); p.Protocol = plan.ProtocolGRPC; return p }()},
			Capacity{OpenFiles: 4096}, ""},
		{"unknown capacity", remote, []plan.Point{conc("m/c=60000", 60000)}, Capacity{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWorkers(&plan.Plan{Servers: tc.servers, Points: tc.points}, tc.c)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestMachineCapacity(t *testing.T) {
	c := MachineCapacity()
	if c.MemAvailable <= 0 || c.OpenFiles <= 0 {
		t.Errorf("capacity %+v: this Linux machine has /proc/meminfo and an open-file limit", c)
	}
}
