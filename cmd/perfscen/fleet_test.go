package main

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
)

const fleetIterations = `
version: 1
name: fleet
server: {url: "server:8000", protocol: http}
models: [{name: simple}]
load: {mode: iterations, concurrency: 6, iterations: 600}
measurement: {window: 1s}
thresholds: [errors == 0]
`

const fleetWindows = `
version: 1
name: fleet
server: {url: "server:8000", protocol: http}
models: [{name: simple}]
sweep: {concurrency: [3, 6]}
measurement: {window: 1s, trials: 4, max_trials: 6, stability: 10%}
thresholds: [errors == 0, throughput >= 250/s]
`

// Three agents and a coordinator give one result, one verdict, one exit
// code: 600 requests in iterations mode (200 per agent), exactly the 600
// the server counted; in time windows every window is the three agents'
// windows merged, with twice the throughput at twice the concurrency (the
// model has instances enough), and each agent is recorded with its clock.
func TestFleetThreeAgentsOneVerdict(t *testing.T) {
	t.Run("iterations", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, map[string]map[string]string{"simple": {"added_latency": "10ms", "instance_count": "8"}})
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(3, sc)
			var agents []*proc
			for i := range 3 {
				agents = append(agents, l.agent(i, sc, nil))
			}
			if c.wait() != 0 {
				t.Fatal(c)
			}
			for _, a := range agents {
				if a.wait() != 0 {
					t.Fatal(a)
				}
			}
			run := readResult(t, filepath.Join(l.dir, "out.json"))
			pt := run.Points[0]
			if pt.Summary.Requests != 600 || l.served("simple") != 600 || pt.Summary.Server == nil || pt.Summary.Server.RequestCount != 600 {
				t.Fatalf("result %d requests, server statistics %+v, server answered %d", pt.Summary.Requests, pt.Summary.Server, l.served("simple"))
			}
			if len(run.Agents) != 3 || run.Verdict == nil || run.Verdict.ExitCode != 0 {
				t.Fatalf("agents %+v, verdict %+v", run.Agents, run.Verdict)
			}
		})
	})
	t.Run("windows", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, map[string]map[string]string{"simple": {"added_latency": "10ms", "instance_count": "8"}})
			sc := l.scenario("fleet.yaml", fleetWindows)
			c := l.coordinator(3, sc)
			for i := range 3 {
				l.agent(i, sc, nil)
			}
			if c.wait() != 0 {
				t.Fatal(c)
			}
			run := readResult(t, filepath.Join(l.dir, "out.json"))
			if len(run.Points) != 2 {
				t.Fatalf("%d points", len(run.Points))
			}
			for i, pt := range run.Points {
				conc := []int64{3, 6}[i]
				for _, tr := range pt.Trials {
					// c requests outstanding at 10 ms each: 100·c per second.
					if tr.Metrics.Requests < 100*conc-conc || tr.Metrics.Requests > 100*conc || tr.Metrics.P50Us != 10000 {
						t.Errorf("%s trial %d: %d requests, p50 %.0f µs", pt.ID, tr.Index, tr.Metrics.Requests, tr.Metrics.P50Us)
					}
					if s := tr.Metrics.Server; s == nil || s.RequestCount < tr.Metrics.Requests-conc || s.RequestCount > tr.Metrics.Requests+conc {
						t.Errorf("%s trial %d: client %d, server %+v", pt.ID, tr.Index, tr.Metrics.Requests, s)
					}
				}
			}
			for _, a := range run.Agents {
				if a.Windows == 0 || a.WindowBytes == 0 || a.ClockOffsetNs != 0 || a.ClockErrorNs != 0 {
					t.Errorf("agent %+v", a)
				}
			}
			if !strings.Contains(c.err.String(), "bytes per agent per window") {
				t.Errorf("no cost line:\n%s", c.err.String())
			}
		})
	})
}
