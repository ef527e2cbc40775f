package main

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
)

const fleetSlow = `
version: 1
name: fleet
server: {url: "server:8000", protocol: http}
models: [{name: simple}]
load: {concurrency: 4}
measurement: {window: 1s, trials: 6, max_trials: 6, stability: 10%}
thresholds: [errors == 0]
`

// waitFor advances the fake clock until p's stderr says want.
func waitFor(t *testing.T, p *proc, want string) {
	t.Helper()
	for i := 0; !strings.Contains(p.err.String(), want); i++ {
		if i > 600 {
			t.Fatalf("%s never said %q:\n%s", p.name, want, p.err.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Agents without the right token, of another version, with another
// scenario file or an index the run has not are refused and named; the
// run goes on when enough agents remain. When they do not, the
// coordinator exits 2 if an agent holding the token was refused (the
// deployment is wrong, not the server), and 3 if only peers without it
// were: anyone who reaches the port could have knocked.
func TestFleetRefusesAgents(t *testing.T) {
	t.Parallel()
	t.Run("wrong and missing tokens, run still met", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(2, sc)
			bad := l.agent(7, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": "guess"})
			none := l.agent(8, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": ""})
			if bad.wait() != 2 || none.wait() != 2 {
				t.Fatalf("%v\n%v", bad, none)
			}
			l.agent(0, sc, nil)
			l.agent(1, sc, nil)
			if c.wait() != 0 {
				t.Fatal(c)
			}
			// Without the token an agent's Hello is not read: it is named
			// by its host.
			for _, want := range []string{"refused an agent from client: wrong token", "refused an agent from client: no token"} {
				if !strings.Contains(c.err.String(), want) {
					t.Errorf("coordinator does not say %q:\n%s", want, c.err.String())
				}
			}
			if !strings.Contains(bad.err.String(), "refused this agent: wrong token") {
				t.Errorf("refused agent: %s", bad.err.String())
			}
			run := readResult(t, filepath.Join(l.dir, "out.json"))
			if len(run.Agents) != 2 || len(run.Notes) < 2 || !strings.Contains(strings.Join(run.Notes, "\n"), "wrong token") {
				t.Errorf("agents %+v, notes %q", run.Agents, run.Notes)
			}
		})
	})
	t.Run("wrong token, run not met", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(1, sc, "--agent-wait", "5s")
			if a := l.agent(0, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": "guess"}); a.wait() != 2 {
				t.Fatal(a)
			}
			if c.wait() != 3 || !strings.Contains(c.err.String(), "0 of 1 agent(s) ready after 5s; missing agent index(es) 0; refused: an agent from client: wrong token") {
				t.Fatal(c)
			}
		})
	})
	// The coordinator gives up at its barrier (an agent never came): the
	// agent that did come exits with the coordinator's code, so a
	// Kubernetes Job of agents reads Failed with the run (exit 0 and
	// Complete before).
	t.Run("coordinator gives up, the agent that came fails too", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(2, sc, "--agent-wait", "5s")
			a := l.agent(0, sc, nil)
			if c.wait() != 3 {
				t.Fatal(c)
			}
			if a.wait() != 3 || !strings.Contains(a.err.String(), "the coordinator gave up (exit 3): the run could not start") {
				t.Fatal(a)
			}
		})
	})
	cases := []struct {
		name    string
		version string
		file    string
		flags   []string
		want    string
	}{
		{name: "version", version: "v0.0.1-other", want: "perfscen version v0.0.1-other, the coordinator runs"},
		{name: "scenario", file: "other.yaml", want: "(not the same file)"},
		{name: "index", flags: []string{"--index", "5"}, want: "index 5 is out of range: the run has 1 agent(s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newFleetLab(t, nil)
				sc := l.scenario("fleet.yaml", fleetIterations)
				asc := sc
				if tc.file != "" {
					asc = l.scenario(tc.file, fleetIterations+"# another file\n")
				}
				c := l.coordinator(1, sc, "--agent-wait", "5s")
				args := append([]string{"agent", "--coordinator", "coordinator:7700", "--name", "odd", asc}, tc.flags...)
				a := l.start("agent", tc.version, nil, args...)
				if a.wait() != 2 || c.wait() != 2 {
					t.Fatalf("%v\n%v", a, c)
				}
				if !strings.Contains(a.err.String(), tc.want) || !strings.Contains(c.err.String(), `refused agent "odd"`) ||
					!strings.Contains(c.err.String(), tc.want) {
					t.Errorf("want %q named\n%v\n%v", tc.want, a, c)
				}
			})
		})
	}
}

// --set overrides reach the agents as the coordinator's own flags: an
// agent given the same overrides in the same order takes part and runs
// the overridden plan; one without them, or with others, is refused and
// named (exit 2), since it would measure another plan than the one
// decided.
func TestFleetOverrides(t *testing.T) {
	t.Parallel()
	set := []string{"--set", "load.iterations=90", "--set", "load.concurrency=3"}
	cases := []struct {
		name  string
		flags []string
		want  string
	}{
		{"none", nil, "--set none, the coordinator's --set [load.iterations=90 load.concurrency=3]"},
		{"other values", []string{"--set", "load.iterations=90", "--set", "load.concurrency=6"}, "--set [load.iterations=90 load.concurrency=6], the coordinator's"},
		{"other order", []string{"--set", "load.concurrency=3", "--set", "load.iterations=90"}, "--set [load.concurrency=3 load.iterations=90], the coordinator's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newFleetLab(t, nil)
				sc := l.scenario("fleet.yaml", fleetIterations)
				c := l.coordinator(1, sc, set...)
				odd := l.start("agent", "", nil, append([]string{"agent", "--coordinator", "coordinator:7700", "--name", "odd", sc}, tc.flags...)...)
				if odd.wait() != 2 || !strings.Contains(odd.err.String(), tc.want) {
					t.Fatalf("want exit 2 saying %q\n%v", tc.want, odd)
				}
				a := l.agent(0, sc, nil, set...)
				if c.wait() != 0 || a.wait() != 0 {
					t.Fatalf("%v\n%v", c, a)
				}
				if !strings.Contains(c.err.String(), `refused agent "odd" from`) || !strings.Contains(c.err.String(), tc.want) {
					t.Errorf("coordinator:\n%s", c.err.String())
				}
				run := readResult(t, filepath.Join(l.dir, "out.json"))
				if len(run.Points) != 1 || run.Points[0].ID != "simple/c=3" || run.Points[0].Summary.Requests != 90 || l.served("simple") != 90 {
					t.Errorf("points %+v, server %d", run.Points, l.served("simple"))
				}
			})
		})
	}
}

const fleetWithData = `
version: 1
name: fleet
server: {url: "server:8000", protocol: http}
models: [{name: simple, input_data: data/simple.json}]
load: {mode: iterations, concurrency: 2, iterations: 40}
measurement: {window: 1s}
thresholds: [errors == 0]
`

// The scenario's hash covers its own bytes; the input data it names is
// compared too: an agent whose copy of the data differs (same scenario
// file, other requests) is refused and named, exit 2, and one with the
// same data in another directory takes part.
func TestFleetRefusesOtherInputData(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		data := `{"data": [{"INPUT0": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], "INPUT1": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]}]}`
		sc := l.scenario("fleet.yaml", fleetWithData)
		l.scenario("data/simple.json", data)
		same := l.scenario("same/fleet.yaml", fleetWithData)
		l.scenario("same/data/simple.json", data)
		other := l.scenario("other/fleet.yaml", fleetWithData)
		l.scenario("other/data/simple.json", strings.ReplaceAll(data, "1, 1, 1", "2, 2, 2"))
		c := l.coordinator(1, sc)
		odd := l.start("agent", "", nil, "agent", "--coordinator", "coordinator:7700", "--name", "odd", other)
		if odd.wait() != 2 || !strings.Contains(odd.err.String(), "refused this agent: the input data the scenario names (data/simple.json) has hash") {
			t.Fatalf("%v", odd)
		}
		if a := l.agent(0, same, nil); c.wait() != 0 || a.wait() != 0 {
			t.Fatalf("%v\n%v", c, a)
		}
		if !strings.Contains(c.err.String(), `refused agent "odd" from`) || !strings.Contains(c.err.String(), "(not the same files)") {
			t.Errorf("coordinator:\n%s", c.err.String())
		}
	})
}

// Mistakes that no agent can fix stop before any load, exit 2, naming
// what is wrong; a coordinator nobody answers at stops the agent with
// exit 3 after its join timeout.
func TestFleetBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		args func(sc string) []string
		vars map[string]string
		want int
		msg  string
	}{
		{name: "more agents than concurrency", body: fleetSlow, want: 2, msg: "concurrency 4 is less than the 5 agents",
			args: func(sc string) []string { return []string{"run", "--agents", "5", sc} }},
		{name: "coordinator without a token", body: fleetSlow, want: 2, msg: "agents need a shared token",
			vars: map[string]string{"PERFSCEN_AGENT_TOKEN": ""},
			args: func(sc string) []string { return []string{"run", "--agents", "1", sc} }},
		{name: "coordinator without a token, TLS without client certificates", body: fleetSlow, want: 2,
			msg:  "agents need a shared token (set PERFSCEN_AGENT_TOKEN or --token-file) or mutual TLS (--agents-tls-client-ca)",
			vars: map[string]string{"PERFSCEN_AGENT_TOKEN": ""},
			args: func(sc string) []string {
				pki := newTestPKI(t, filepath.Dir(sc), "fleet")
				return []string{"run", "--agents", "1", "--agents-tls-cert", pki.serverCert, "--agents-tls-key", pki.serverKey, sc}
			}},
		{name: "client CA without the coordinator's certificate", body: fleetSlow, want: 2,
			msg:  "--agents-tls-cert and --agents-tls-key go together",
			args: func(sc string) []string { return []string{"run", "--agents", "1", "--agents-tls-client-ca", sc, sc} }},
		{name: "embedded server", body: "version: 1\nserver: {embedded: true}\nmodels: [{name: simple}]\n", want: 2, msg: "server.embedded: agents need a server they can all reach",
			args: func(sc string) []string { return []string{"run", "--agents", "1", sc} }},
		{name: "count windows", body: strings.Replace(fleetSlow, "measurement: {window: 1s,", "measurement: {mode: count_windows,", 1), want: 2,
			msg:  "measurement.mode count_windows: agents cut time windows on one clock",
			args: func(sc string) []string { return []string{"run", "--agents", "1", sc} }},
		{name: "two scenarios", body: fleetSlow, want: 2, msg: "--agents runs one scenario; got 2",
			args: func(sc string) []string {
				other := filepath.Join(filepath.Dir(sc), "other.yaml")
				writeFile(t, other, strings.Replace(fleetSlow, "name: fleet", "name: other", 1))
				return []string{"run", "--agents", "1", sc, other}
			}},
		{name: "coordinator address without a port", body: fleetSlow, want: 2, msg: `--coordinator "coordinator": want host:port`,
			args: func(sc string) []string { return []string{"agent", "--coordinator", "coordinator", sc} }},
		{name: "nobody at the coordinator address", body: fleetSlow, want: 3, msg: "could not reach the coordinator at nowhere:7700 within 5s: ",
			args: func(sc string) []string {
				return []string{"agent", "--coordinator", "nowhere:7700", "--join-timeout", "5s", sc}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newFleetLab(t, nil)
				sc := l.scenario("fleet.yaml", tc.body)
				p := l.start("perfscen", "", tc.vars, tc.args(sc)...)
				if p.wait() != tc.want || !strings.Contains(p.err.String(), tc.msg) {
					t.Fatalf("want exit %d saying %q\n%v", tc.want, tc.msg, p)
				}
				// The scenario's path is said once ("conc.yaml: conc.yaml:
				// point…" before).
				if strings.Contains(p.err.String(), sc+": "+sc+":") {
					t.Errorf("the scenario's path is printed twice:\n%s", p.err.String())
				}
			})
		})
	}
}

// cuttable is an in-memory network whose connections to the coordinator
// can be cut (the coordinator's process killed: its peers see the
// connection end) or frozen (the process stopped: nothing moves, nothing
// ends, and only heartbeats notice).
type cuttable struct {
	inner *kinds.Net
	mu    sync.Mutex
	conns []*freezable
}

type freezable struct {
	net.Conn
	frozen, closed        chan struct{}
	freezeOnce, closeOnce sync.Once
}

// Read after a freeze gets nothing until the reader closes the
// connection itself, as from a stopped peer.
func (f *freezable) Read(b []byte) (int, error) {
	select {
	case <-f.frozen:
		<-f.closed
		return 0, net.ErrClosed
	default:
	}
	return f.Conn.Read(b)
}

func (f *freezable) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return f.Conn.Close()
}

func (f *freezable) freeze() { f.freezeOnce.Do(func() { close(f.frozen) }) }

func (c *cuttable) net() *kinds.Net {
	return &kinds.Net{Listen: c.inner.Listen, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := c.inner.Dial(ctx, network, addr)
		if err != nil || addr != "coordinator:7700" {
			return conn, err
		}
		f := &freezable{Conn: conn, frozen: make(chan struct{}), closed: make(chan struct{})}
		c.mu.Lock()
		c.conns = append(c.conns, f)
		c.mu.Unlock()
		return f, nil
	}}
}

func (c *cuttable) each(do func(f *freezable)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.conns {
		do(f)
	}
}

// An agent lost in the middle of a point makes the point "could not
// measure" (exit 3) naming the agent, never a smaller load measured as if
// whole; a coordinator gone (its connections ended) or silent (its
// process stopped) stops every agent's load within three heartbeats.
func TestFleetFaults(t *testing.T) {
	t.Parallel()
	t.Run("agent lost mid-run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetSlow)
			c := l.coordinator(2, sc)
			l.agent(0, sc, nil)
			a1 := l.agent(1, sc, nil)
			waitFor(t, c, "session 1: point")
			time.Sleep(2500 * time.Millisecond) // into the second window
			a1.cancel()
			if c.wait() != 3 || !strings.Contains(c.err.String(), "agent 1 (a1) lost") {
				t.Fatal(c)
			}
			// Why, in the agent's words: its connection went, not a
			// cancellation by the coordinator ("rpc error: code =
			// Canceled desc = context canceled" before).
			if strings.Contains(c.err.String(), "context canceled") {
				t.Errorf("the lost agent's reason:\n%s", c.err.String())
			}
			run := readResult(t, filepath.Join(l.dir, "out.json"))
			if run.Status != "partial" || run.Verdict.ExitCode != 3 || !strings.Contains(strings.Join(run.Errors, " "), "agent 1 (a1) lost") {
				t.Errorf("status %s, verdict %+v, errors %q", run.Status, run.Verdict, run.Errors)
			}
		})
	})
	for _, how := range []string{"killed", "stopped"} {
		t.Run("coordinator "+how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newFleetLab(t, nil)
				cut := &cuttable{inner: l.net}
				l.net = cut.net()
				sc := l.scenario("fleet.yaml", fleetSlow)
				l.coordinator(2, sc)
				a0, a1 := l.agent(0, sc, nil), l.agent(1, sc, nil)
				waitFor(t, a0, "session 1: point")
				time.Sleep(1500 * time.Millisecond)
				start := time.Now()
				cut.each(func(f *freezable) {
					if how == "killed" {
						f.Close()
					} else {
						f.freeze()
					}
				})
				for _, a := range []*proc{a0, a1} {
					if a.wait() != 3 || !strings.Contains(a.err.String(), "lost the coordinator at coordinator:7700") {
						t.Fatal(a)
					}
				}
				// Three heartbeats of 1 s, checked every heartbeat, plus the
				// drain of the requests in flight.
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("agents stopped %s after the coordinator was %s", took, how)
				}
				served := l.served("simple")
				time.Sleep(5 * time.Second)
				if l.served("simple") != served {
					t.Errorf("load went on after the agents stopped: %d then %d requests", served, l.served("simple"))
				}
			})
		})
	}
	t.Run("agent late, barrier waits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(3, sc)
			l.agent(0, sc, nil)
			l.agent(1, sc, nil)
			time.Sleep(8 * time.Second) // of the 10 s the coordinator waits
			if strings.Contains(c.err.String(), "session") {
				t.Fatalf("load started without agent 2:\n%s", c.err.String())
			}
			l.agent(2, sc, nil)
			if c.wait() != 0 {
				t.Fatal(c)
			}
		})
	})
	t.Run("agent never comes, barrier bounded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			start := time.Now()
			c := l.coordinator(3, sc)
			a0, a1 := l.agent(0, sc, nil), l.agent(1, sc, nil)
			if c.wait() != 3 || !strings.Contains(c.err.String(), "2 of 3 agent(s) ready after 10s; missing agent index(es) 2") {
				t.Fatal(c)
			}
			if took := time.Since(start); took != 10*time.Second {
				t.Errorf("gave up after %s, want the 10s of --agent-wait", took)
			}
			// The agents that came fail with the coordinator (exit 3), so
			// their Job does not read Complete; none sent a request.
			if a0.wait() != 3 || a1.wait() != 3 || l.served("simple") != 0 {
				t.Errorf("agents %d %d, %d requests sent", a0.code, a1.code, l.served("simple"))
			}
		})
	})
	t.Run("agent cannot reach the server", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newFleetLab(t, nil)
			sc := l.scenario("fleet.yaml", fleetIterations)
			c := l.coordinator(2, sc)
			l.agent(0, sc, nil)
			// Agent 1's host reaches the coordinator but not the server.
			inner := l.net
			l.net = &kinds.Net{Listen: inner.Listen, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if addr != "coordinator:7700" {
					return nil, &net.OpError{Op: "dial", Net: network, Err: context.DeadlineExceeded}
				}
				return inner.Dial(ctx, network, addr)
			}}
			a1 := l.agent(1, sc, nil, "--connect-timeout", "2s")
			if c.wait() != 3 || !strings.Contains(c.err.String(), "agent 1 (a1) could not reach the scenario's servers") {
				t.Fatal(c)
			}
			if a1.wait() != 3 {
				t.Fatal(a1)
			}
		})
	})
}

// An agent's clock off by 3 s is measured (exactly, on the fake clock's
// zero round trip) and its sessions start on the coordinator's epoch all
// the same: its log's unskewed epoch is the coordinator's.
func TestFleetClockOffset(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		sc := l.scenario("fleet.yaml", fleetIterations)
		c := l.coordinator(2, sc, "--agent-wait", "20s")
		a0 := l.agent(0, sc, nil)
		a1 := l.agent(1, sc, map[string]string{"PERFSCEN_AGENT_CLOCK_SKEW": "3s"})
		if c.wait() != 0 || a0.wait() != 0 || a1.wait() != 0 {
			t.Fatalf("%v\n%v", c, a1)
		}
		run := readResult(t, filepath.Join(l.dir, "out.json"))
		for _, a := range run.Agents {
			want := map[string]int64{"a0": 0, "a1": int64(3 * time.Second)}[a.Name]
			if a.ClockOffsetNs != want || a.ClockErrorNs != 0 {
				t.Errorf("%s: offset %d ± %d ns, want %d", a.Name, a.ClockOffsetNs, a.ClockErrorNs, want)
			}
		}
		coord := epochs(c.err.String(), "epoch ", " (coordinator's clock)")
		for _, a := range []*proc{a0, a1} {
			got := epochs(a.err.String(), "on this host's clock (", " unskewed)")
			if len(got) == 0 || strings.Join(got, " ") != strings.Join(coord, " ") {
				t.Errorf("%s epochs %v, the coordinator's %v", a.name, got, coord)
			}
		}
	})
}

// epochs picks the numbers between before and after on each line of log.
func epochs(log, before, after string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		_, rest, ok := strings.Cut(line, before)
		if !ok {
			continue
		}
		if v, _, ok := strings.Cut(rest, after); ok {
			out = append(out, v)
		}
	}
	return out
}

// Agents reach a coordinator that serves TLS and asks for client
// certificates when they verify it and present one. Agents its mutual
// TLS refuses (no certificate, one of another CA) are named by address
// in its log and the result's notes and exit 2 at once, as for a wrong
// token; an agent dialling it in plaintext is named too, and finds out
// by a probe that the coordinator speaks TLS: exit 2 as well.
func TestFleetMutualTLS(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		pki, other := newTestPKI(t, l.dir, "fleet"), newTestPKI(t, l.dir, "other")
		sc := l.scenario("fleet.yaml", fleetIterations)
		c := l.coordinator(2, sc, "--agents-tls-cert", pki.serverCert, "--agents-tls-key", pki.serverKey, "--agents-tls-client-ca", pki.caFile)
		verify := []string{"--tls-ca", pki.caFile, "--tls-server-name", "127.0.0.1", "--join-timeout", "1h"}
		nocert := l.agent(7, sc, nil, verify...)
		stranger := l.agent(8, sc, nil, append(verify, "--tls-cert", other.clientCert, "--tls-key", other.clientKey)...)
		plain := l.agent(5, sc, nil, "--join-timeout", "1h")
		for _, a := range []*proc{nocert, stranger} {
			if a.wait() != 2 || !strings.Contains(a.err.String(), "mutual TLS refused this agent's certificate (--tls-cert)") {
				t.Fatalf("want exit 2, refused by mutual TLS\n%v", a)
			}
		}
		// The other way round: an agent that does not trust the
		// coordinator's certificate stops as soon, and is named too.
		wary := l.agent(9, sc, nil, "--tls-ca", other.caFile, "--tls-server-name", "127.0.0.1", "--join-timeout", "1h",
			"--tls-cert", pki.clientCert, "--tls-key", pki.clientKey)
		if wary.wait() != 2 || !strings.Contains(wary.err.String(), "its certificate is not one this agent trusts (--tls-ca, --tls-server-name)") {
			t.Fatalf("want exit 2, the coordinator not trusted\n%v", wary)
		}
		if plain.wait() != 2 || !strings.Contains(plain.err.String(), "TLS with the coordinator at coordinator:7700: it serves TLS and this agent dialled without (give --tls-ca") {
			t.Fatalf("want exit 2, dialled without TLS\n%v", plain)
		}
		tlsFlags := append(verify, "--tls-cert", pki.clientCert, "--tls-key", pki.clientKey)
		a0, a1 := l.agent(0, sc, nil, tlsFlags...), l.agent(1, sc, nil, tlsFlags...)
		if c.wait() != 0 || a0.wait() != 0 || a1.wait() != 0 {
			t.Fatalf("%v\n%v", c, a0)
		}
		wants := []string{"mutual TLS: it presented no client certificate signed by --agents-tls-client-ca (give the agent --tls-cert and --tls-key)",
			"it dialled without TLS; this coordinator serves TLS",
			"TLS: the agent did not accept the coordinator's certificate"}
		run := readResult(t, filepath.Join(l.dir, "out.json"))
		notes := strings.Join(run.Notes, "\n")
		for _, want := range wants {
			if !strings.Contains(c.err.String(), "refused an agent from ") || !strings.Contains(c.err.String(), want) {
				t.Errorf("coordinator does not say %q:\n%s", want, c.err.String())
			}
			if !strings.Contains(notes, want) {
				t.Errorf("notes lack %q: %q", want, run.Notes)
			}
		}
		// The agent without a certificate and the one with another CA's
		// (Go's client sends none the coordinator did not ask for) come
		// from one host here: one note, counting both (and any retry
		// gRPC made before an agent stopped); the plaintext agent's
		// retries too.
		if len(run.Agents) != 2 || len(run.Notes) != 3 || !regexp.MustCompile(`\(give the agent --tls-cert and --tls-key\) \([2-9] times\)`).MatchString(notes) {
			t.Errorf("agents %+v, notes %q", run.Agents, run.Notes)
		}
	})
}

// Mutual TLS alone admits agents, as the token alone does: a coordinator
// without a token that requires client certificates runs with agents
// that carry none, and still refuses an agent without a certificate.
func TestFleetMutualTLSWithoutToken(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newFleetLab(t, nil)
		pki := newTestPKI(t, l.dir, "fleet")
		sc := l.scenario("fleet.yaml", fleetIterations)
		noToken := map[string]string{"PERFSCEN_AGENT_TOKEN": ""}
		c := l.start("coordinator", "", noToken, "run", "-q", "--agents", "2", "--listen", "coordinator:7700", "--agent-wait", "10s",
			"--out", filepath.Join(l.dir, "out.json"), "--agents-tls-cert", pki.serverCert, "--agents-tls-key", pki.serverKey,
			"--agents-tls-client-ca", pki.caFile, sc)
		verify := []string{"--tls-ca", pki.caFile, "--tls-server-name", "127.0.0.1"}
		if a := l.agent(5, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": ""}, verify...); a.wait() != 2 {
			t.Fatalf("an agent with neither token nor certificate joined\n%v", a)
		}
		tlsFlags := append(verify, "--tls-cert", pki.clientCert, "--tls-key", pki.clientKey)
		a0 := l.agent(0, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": ""}, tlsFlags...)
		a1 := l.agent(1, sc, map[string]string{"PERFSCEN_AGENT_TOKEN": ""}, tlsFlags...)
		if c.wait() != 0 || a0.wait() != 0 || a1.wait() != 0 {
			t.Fatalf("%v\n%v\n%v", c, a0, a1)
		}
		if got := l.served("simple"); got != 600 {
			t.Errorf("server answered %d, want 600", got)
		}
	})
}
