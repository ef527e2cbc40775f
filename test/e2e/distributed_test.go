package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The multi-host tests run a reference server, a coordinator and agents
// on separate hosts: network namespaces of this machine joined by a
// bridge (netns_test.go). They need root; elsewhere they skip with one
// line.

const fleetToken = "PERFSCEN_AGENT_TOKEN=e2e-fleet-token"

// fleetHosts are the lab's hosts: the server, the coordinator, agents.
var fleetHosts = []string{"srv", "coord", "a0", "a1", "a2"}

// startFleetServer serves simple (5 ms per execution, 8 instances) on the
// server host.
func startFleetServer(t *testing.T, l *netLab) *hostProc {
	t.Helper()
	return l.run("srv", "server", nil, perfscenBin(t), "serve", "--host", l.addrs["srv"], "--http-port", "8000",
		"--grpc-port", "-1", "--model-param", "simple.added_latency=5ms", "--model-param", "simple.instance_count=8")
}

// fleetScenario writes a scenario whose server is the lab's.
func fleetScenario(t *testing.T, l *netLab, dir, body string) string {
	t.Helper()
	return writeScenario(t, dir, "fleet.yaml", fmt.Sprintf("version: 1\nname: fleet\nserver: {url: \"%s:8000\", protocol: http, timeout: 5s}\nmodels: [{name: simple}]\n%s", l.addrs["srv"], body))
}

// coordinator starts perfscen run --agents n on the coordinator host.
func startCoordinator(t *testing.T, l *netLab, n int, sc, out string, flags ...string) *hostProc {
	t.Helper()
	args := append([]string{perfscenBin(t), "run", "-q", "--agents", strconv.Itoa(n), "--listen", l.addrs["coord"] + ":7700",
		"--connect-timeout", "30s", "--agent-wait", "60s", "--out", out, sc}, flags...)
	return l.run("coord", "coordinator", []string{fleetToken}, args...)
}

// startAgent starts agent i on host a<i>.
func startAgent(t *testing.T, l *netLab, i int, sc string, env ...string) *hostProc {
	t.Helper()
	host := "a" + strconv.Itoa(i)
	return l.run(host, "agent "+strconv.Itoa(i), append([]string{fleetToken}, env...), perfscenBin(t), "agent",
		"--coordinator", l.addrs["coord"]+":7700", "--index", strconv.Itoa(i), "--name", host, "--connect-timeout", "30s", sc)
}

const runLimit = 2 * time.Minute

// Three agents on three hosts, a coordinator on a fourth and the server
// on a fifth give one result, one report and one exit code. In iterations
// mode the 600 requests the result counts are the 600 the server counted;
// in time windows every trial is the three agents' windows merged, with
// the server's own figures beside it (read when the merged window
// arrives, so off by what the server answered while the reports
// travelled: a few percent when quiet, more under load). An agent with a wrong token is refused and named by its host
// (what it says of itself is not read), and the run, which still has its three agents, goes on.
func TestDistributedOneVerdict(t *testing.T) {
	t.Parallel()
	l := newNetLab(t, fleetHosts...)
	dir := t.TempDir()
	startFleetServer(t, l)

	sc := fleetScenario(t, l, dir, "load: {mode: iterations, concurrency: 6, iterations: 600}\nthresholds: [errors == 0]\n")
	out := filepath.Join(dir, "iterations.json")
	c := startCoordinator(t, l, 3, sc, out)
	bad := l.run("a0", "intruder", []string{"PERFSCEN_AGENT_TOKEN=guess"}, perfscenBin(t), "agent", "--coordinator", l.addrs["coord"]+":7700", "--name", "intruder", sc)
	if code := bad.wait(t, runLimit); code != 2 || !strings.Contains(bad.err.String(), "wrong token") {
		t.Fatalf("intruder: %v", bad)
	}
	var agents []*hostProc
	for i := range 3 {
		agents = append(agents, startAgent(t, l, i, sc))
	}
	if code := c.wait(t, runLimit); code != 0 {
		t.Fatalf("%v\n%v", c, agents[0])
	}
	for _, a := range agents {
		if code := a.wait(t, runLimit); code != 0 {
			t.Fatal(a)
		}
	}
	run := readRun(t, out)
	pt := run.Points[0]
	if pt.Summary.Requests != 600 || pt.Summary.Server == nil || pt.Summary.Server.RequestCount != 600 {
		t.Fatalf("the result counts %d requests, the server %+v", pt.Summary.Requests, pt.Summary.Server)
	}
	if len(run.Agents) != 3 || !strings.Contains(c.err.String(), "refused an agent from "+l.addrs["a0"]+": wrong token") ||
		!strings.Contains(strings.Join(run.Notes, "\n"), "wrong token") {
		t.Errorf("agents %+v, notes %q\n%s", run.Agents, run.Notes, c.err.String())
	}
	for _, a := range run.Agents {
		if !strings.HasPrefix(a.Address, labSubnet) {
			t.Errorf("agent %d dialled from %s, not its own host", a.Index, a.Address)
		}
	}

	sc = fleetScenario(t, l, dir, "load: {concurrency: 6}\nmeasurement: {window: 500ms, trials: 3, max_trials: 6, stability: 50%, allow_unstable: true}\nthresholds: [errors == 0]\n")
	out = filepath.Join(dir, "windows.json")
	c = startCoordinator(t, l, 3, sc, out)
	for i := range 3 {
		startAgent(t, l, i, sc)
	}
	if code := c.wait(t, runLimit); code != 0 {
		t.Fatal(c)
	}
	pt = readRun(t, out).Points[0]
	// Each window's server figures are read when its merged report
	// arrives, so on a loaded machine a late report shifts requests from
	// one window's server count to the next: the windows agree only
	// together. Every trial has server figures, and over the kept trials
	// the server counted about what the agents did (the exact count is the
	// iterations run's, above).
	var agentsN, serverN int64
	for _, tr := range pt.Trials {
		s := tr.Metrics.Server
		if s == nil || s.RequestCount == 0 || tr.Metrics.Requests == 0 {
			t.Errorf("trial %d: the agents counted %d requests, the server %+v", tr.Index, tr.Metrics.Requests, s)
			continue
		}
		agentsN, serverN = agentsN+tr.Metrics.Requests, serverN+s.RequestCount
	}
	if serverN < agentsN/2 || serverN > agentsN*2 {
		t.Errorf("over the kept trials the agents counted %d requests, the server %d", agentsN, serverN)
	}
}

// sessionEpoch reads "session N: … epoch E (coordinator's clock); agent i
// offset Ons ± Ens, …" from the coordinator's log.
var sessionLine = regexp.MustCompile(`session (\d+): point .* epoch (\d+) \(coordinator's clock\); (.*)`)
var agentOffset = regexp.MustCompile(`agent (\d+) offset (-?\d+)ns ± (\d+)ns`)

// agentEpoch reads "session N: point P starts at A on this host's clock
// (U unskewed)" from an agent's log.
var agentEpoch = regexp.MustCompile(`session (\d+): point \d+ starts at -?\d+ on this host's clock \((\d+) unskewed\)`)

// The faults a distributed run meets, each with its exit code: an agent
// killed in the middle of a window (the point could not be measured, exit
// 3, naming it); an agent starting late (the barrier waits) or never (the
// barrier gives up after --agent-wait, exit 3); the coordinator killed or
// stopped (every agent stops its load on its own within three heartbeats,
// exit 3); an agent whose clock is 2 s off (measured, and its windows
// start on the coordinator's epoch within the measured error).
func TestDistributedFaults(t *testing.T) {
	t.Parallel()
	windows := "load: {concurrency: 3}\nmeasurement: {window: 500ms, trials: 8, max_trials: 6, stability: 50%, allow_unstable: true}\n"
	t.Run("agent killed mid-window", func(t *testing.T) {
		t.Parallel()
		l := newNetLab(t, fleetHosts...)
		dir := t.TempDir()
		startFleetServer(t, l)
		sc := fleetScenario(t, l, dir, windows)
		c := startCoordinator(t, l, 3, sc, filepath.Join(dir, "out.json"))
		var agents []*hostProc
		for i := range 3 {
			agents = append(agents, startAgent(t, l, i, sc))
		}
		c.waitOutput(t, "session 1: point", runLimit)
		m := sessionLine.FindStringSubmatch(c.err.String())
		epoch, _ := strconv.ParseInt(m[2], 10, 64)
		// Half way through the second window.
		time.Sleep(time.Until(time.Unix(0, epoch).Add(750 * time.Millisecond)))
		agents[1].kill()
		if code := c.wait(t, runLimit); code != 3 || !strings.Contains(c.err.String(), "agent 1 (a1) lost") {
			t.Fatal(c)
		}
		run := readRun(t, filepath.Join(dir, "out.json"))
		if run.Status != "partial" || run.Verdict == nil || run.Verdict.ExitCode != 3 {
			t.Errorf("status %s, verdict %+v", run.Status, run.Verdict)
		}
	})
	t.Run("agent late", func(t *testing.T) {
		t.Parallel()
		l := newNetLab(t, fleetHosts...)
		dir := t.TempDir()
		startFleetServer(t, l)
		sc := fleetScenario(t, l, dir, "load: {mode: iterations, concurrency: 3, iterations: 90}\n")
		c := startCoordinator(t, l, 3, sc, filepath.Join(dir, "out.json"))
		startAgent(t, l, 0, sc)
		startAgent(t, l, 1, sc)
		c.waitOutput(t, "agent 0 (a0) ready", runLimit)
		c.waitOutput(t, "agent 1 (a1) ready", runLimit)
		if strings.Contains(c.err.String(), "session") {
			t.Fatalf("load started with two of three agents:\n%s", c.err.String())
		}
		startAgent(t, l, 2, sc)
		if code := c.wait(t, runLimit); code != 0 {
			t.Fatal(c)
		}
	})
	t.Run("agent never comes", func(t *testing.T) {
		t.Parallel()
		l := newNetLab(t, fleetHosts...)
		dir := t.TempDir()
		startFleetServer(t, l)
		sc := fleetScenario(t, l, dir, "load: {mode: iterations, concurrency: 3, iterations: 90}\n")
		start := time.Now()
		c := startCoordinator(t, l, 3, sc, filepath.Join(dir, "out.json"), "--agent-wait", "3s")
		a0, a1 := startAgent(t, l, 0, sc), startAgent(t, l, 1, sc)
		if code := c.wait(t, runLimit); code != 3 || !strings.Contains(c.err.String(), "missing agent index(es) 2") {
			t.Fatal(c)
		}
		// The barrier's 3 s, besides starting processes and reaching the
		// server on a loaded machine: bounded, not waiting forever.
		if took := time.Since(start); took > 45*time.Second {
			t.Errorf("gave up after %s", took)
		}
		// The agents that came fail with the coordinator, so a Job of
		// agents does not read Complete.
		if a0.wait(t, runLimit) != 3 || a1.wait(t, runLimit) != 3 {
			t.Errorf("agents: %v\n%v", a0, a1)
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		t.Run("coordinator "+sig.String(), func(t *testing.T) {
			t.Parallel()
			l := newNetLab(t, fleetHosts...)
			dir := t.TempDir()
			startFleetServer(t, l)
			sc := fleetScenario(t, l, dir, windows)
			c := startCoordinator(t, l, 3, sc, filepath.Join(dir, "out.json"))
			var agents []*hostProc
			for i := range 3 {
				agents = append(agents, startAgent(t, l, i, sc))
			}
			c.waitOutput(t, "session 1: point", runLimit)
			c.signal(sig)
			// Three heartbeats of 1 s and the drain, with room for a
			// loaded machine; the limit is what fails the test.
			for _, a := range agents {
				if code := a.wait(t, 20*time.Second); code != 3 || !strings.Contains(a.err.String(), "lost the coordinator") {
					t.Fatal(a)
				}
			}
		})
	}
	t.Run("agent clock 2s off", func(t *testing.T) {
		t.Parallel()
		l := newNetLab(t, fleetHosts...)
		dir := t.TempDir()
		startFleetServer(t, l)
		sc := fleetScenario(t, l, dir, "load: {concurrency: 3}\nmeasurement: {window: 500ms, trials: 3, max_trials: 4, stability: 80%, allow_unstable: true}\n")
		c := startCoordinator(t, l, 3, sc, filepath.Join(dir, "out.json"))
		var agents []*hostProc
		for i := range 3 {
			var env []string
			if i == 1 {
				env = append(env, "PERFSCEN_AGENT_CLOCK_SKEW=2s")
			}
			agents = append(agents, startAgent(t, l, i, sc, env...))
		}
		if code := c.wait(t, runLimit); code != 0 {
			t.Fatal(c)
		}
		for _, a := range agents {
			a.wait(t, runLimit)
		}
		checked := 0
		for _, line := range sessionLine.FindAllStringSubmatch(c.err.String(), -1) {
			epoch, _ := strconv.ParseInt(line[2], 10, 64)
			for _, off := range agentOffset.FindAllStringSubmatch(line[3], -1) {
				i, _ := strconv.Atoi(off[1])
				offset, _ := strconv.ParseInt(off[2], 10, 64)
				bound, _ := strconv.ParseInt(off[3], 10, 64)
				want := int64(0)
				if i == 1 {
					want = int64(2 * time.Second)
				}
				// Both processes read one machine's clock: the true offset
				// is the injected skew, and the slack covers the wall
				// clock's own slewing between the processes' starts.
				const slack = int64(100 * time.Microsecond)
				if d := offset - want; d > bound+slack || d < -bound-slack {
					t.Errorf("session %s, agent %d: offset %d ± %d ns, true %d", line[1], i, offset, bound, want)
				}
				for _, ae := range agentEpoch.FindAllStringSubmatch(agents[i].err.String(), -1) {
					if ae[1] != line[1] {
						continue
					}
					at, _ := strconv.ParseInt(ae[2], 10, 64)
					if d := at - epoch; d > bound+slack || d < -bound-slack {
						t.Errorf("session %s, agent %d: starts %d ns from the coordinator's epoch, measured error %d ns", line[1], i, d, bound)
					}
					checked++
				}
			}
		}
		if checked < 3 {
			t.Fatalf("checked %d session starts\n%s", checked, c.err.String())
		}
	})
}
