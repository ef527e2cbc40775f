package main

import (
	"fmt"
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
measurement: {window: 500ms, trials: 4, max_trials: 6, stability: 10%}
thresholds: [errors == 0, throughput >= 250/s]
`

// Three agents and a coordinator give one result, one verdict, one exit
// code: 600 requests in iterations mode (200 per agent), exactly the 600
// the server counted; in time windows every window is the three agents'
// windows merged, with twice the throughput at twice the concurrency (the
// model has instances enough), and each agent is recorded with its clock.
func TestFleetThreeAgentsOneVerdict(t *testing.T) {
	t.Parallel()
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
					// c requests outstanding at 10 ms each: 50·c per half-second window.
					if tr.Metrics.Requests < 50*conc-conc || tr.Metrics.Requests > 50*conc || tr.Metrics.P50Us != 10000 {
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
			if !strings.Contains(c.err.String(), "bytes per agent per window (report messages alone)") {
				t.Errorf("no cost line:\n%s", c.err.String())
			}
			// The whole connections carry the reports and more (framing,
			// probes, heartbeats): counted at the socket, never less.
			var reports, in, out, windows int64
			for _, line := range strings.Split(c.err.String(), "\n") {
				fmt.Sscanf(line, "perfscen: 3 agent(s) sent %d window report(s), %d bytes", &windows, &reports)
				fmt.Sscanf(line, "perfscen: the agents' connections carried %d bytes in, %d out", &in, &out)
			}
			if windows == 0 || reports == 0 || in <= reports || out == 0 {
				t.Errorf("%d windows, reports %d bytes, connections %d in, %d out:\n%s", windows, reports, in, out, c.err.String())
			}
		})
	})
}

const fleetMix = `
version: 1
name: fleet-mix
server: {url: "server:8000", protocol: http}
models:
  - {name: simple, alias: interactive}
  - {name: delay, alias: batch, shapes: {INPUT0: [16]}}
mixes:
  - {name: alone, models: {interactive: {concurrency: 2}}}
  - {name: busy, models: {batch: {concurrency: 4}, interactive: {concurrency: 2}}}
measurement: {window: 500ms, trials: 10, max_trials: 6, stability: 10%}
comparisons:
  - {name: visible, candidate: busy/interactive, reference: alone/interactive, metric: p50, min_ratio: 1.5}
`

// A mix from agents: each member's load is shared among them, every
// member's windows of every agent are cut on one clock and merged, and the
// comparison across mixes is decided once on the merged trials.
func TestFleetMix(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, map[string]map[string]string{
			"simple": {"added_latency": "10ms", "device": "gpu0"}, "delay": {"delay": "10ms", "device": "gpu0"}})
		sc := l.scenario("mix.yaml", fleetMix)
		c := l.coordinator(2, sc)
		l.agent(0, sc, nil)
		l.agent(1, sc, nil)
		if c.wait() != 0 {
			t.Fatal(c)
		}
		run := readResult(t, filepath.Join(l.dir, "out.json"))
		var ids []string
		for _, p := range run.Points {
			ids = append(ids, p.ID)
		}
		if got := strings.Join(ids, " "); got != "alone/interactive/c=2 busy/interactive/c=2 busy/batch/c=4 busy/all" {
			t.Fatalf("points %s", got)
		}
		inter, batch, all := run.Points[1], run.Points[2], run.Points[3]
		for i := range inter.Trials {
			if !inter.Trials[i].Start.Equal(batch.Trials[i].Start) || all.Trials[i].Metrics.Requests != inter.Trials[i].Metrics.Requests+batch.Trials[i].Metrics.Requests {
				t.Errorf("trial %d: members start %v and %v; whole mix %d requests", i, inter.Trials[i].Start, batch.Trials[i].Start, all.Trials[i].Metrics.Requests)
			}
		}
		if run.Verdict.ExitCode != 0 || !strings.Contains(c.out.String(), "pass   │ comparison │ visible >= 1.5") {
			t.Errorf("verdict %+v\n%s", run.Verdict, c.out.String())
		}
	})
}
