package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/refserver"
)

// fleetLab is a distributed run in one test process: a reference server,
// a coordinator and agents, each an in-process perfscen with an
// environment of its own, all on one in-memory network. Under
// testing/synctest the whole run is on the fake clock.
type fleetLab struct {
	t   *testing.T
	net *kinds.Net
	srv *refserver.Server
	dir string
	// pods, when set, is what the processes' --agent-pods lists.
	pods podLister
}

const labToken = "s3cret-token"

// newFleetLab starts the reference server (simple with a 10 ms service
// time) at server:8000.
func newFleetLab(t *testing.T, params map[string]map[string]string) *fleetLab {
	t.Helper()
	var mem memnet.Network
	l := &fleetLab{t: t, net: &kinds.Net{Listen: mem.Listen, Dial: mem.Dial}, dir: t.TempDir()}
	if params == nil {
		params = map[string]map[string]string{"simple": {"added_latency": "10ms"}}
	}
	srv, err := refserver.New(refserver.Options{HTTPAddr: "server:8000", GRPCAddr: "server:8001", Listen: mem.Listen,
		PlainTimers: true, Models: []string{"simple", "delay"}, ModelParams: params, ShutdownGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	l.srv = srv
	return l
}

// scenario writes a scenario into the lab's directory.
func (l *fleetLab) scenario(name, body string) string {
	l.t.Helper()
	return writeFile(l.t, filepath.Join(l.dir, name), body)
}

// proc is one perfscen process of the lab.
type proc struct {
	name     string
	cancel   context.CancelFunc
	done     chan struct{}
	code     int
	out, err syncBuffer
}

// start runs perfscen args with vars as its environment (a token is
// added unless vars sets one, "" for none) and version as its version.
func (l *fleetLab) start(name, version string, vars map[string]string, args ...string) *proc {
	vals := map[string]string{"PERFSCEN_AGENT_TOKEN": labToken}
	for k, v := range vars {
		vals[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{name: name, cancel: cancel, done: make(chan struct{})}
	e := &env{ctx: ctx, stdin: strings.NewReader(""), stdout: &p.out, stderr: &p.err,
		getenv: func(k string) string { return vals[k] }, net: l.net, version: version, pods: l.pods}
	go func() {
		defer close(p.done)
		p.code = runEnv(e, args)
	}()
	l.t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// wait is the process's exit code once it has ended.
func (p *proc) wait() int {
	<-p.done
	return p.code
}

func (p *proc) String() string {
	return fmt.Sprintf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", p.name, p.code, p.out.String(), p.err.String())
}

// coordinator starts perfscen run --agents n on sc, writing out.json.
func (l *fleetLab) coordinator(n int, sc string, flags ...string) *proc {
	args := append([]string{"run", "-q", "--agents", fmt.Sprint(n), "--listen", "coordinator:7700",
		"--agent-wait", "10s", "--out", filepath.Join(l.dir, "out.json"), sc}, flags...)
	return l.start("coordinator", "", nil, args...)
}

// agent starts perfscen agent number i on sc, with index i as a
// Kubernetes Indexed Job would give it.
func (l *fleetLab) agent(i int, sc string, vars map[string]string, flags ...string) *proc {
	args := append([]string{"agent", "--coordinator", "coordinator:7700", "--name", fmt.Sprintf("a%d", i),
		"--join-timeout", "20s", sc}, flags...)
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["JOB_COMPLETION_INDEX"]; !ok {
		vars["JOB_COMPLETION_INDEX"] = fmt.Sprint(i)
	}
	return l.start(fmt.Sprintf("agent %d", i), "", vars, args...)
}

// served is how many requests of model the server answered.
func (l *fleetLab) served(model string) uint64 {
	for _, s := range l.srv.Statistics() {
		if s.Name == model {
			return s.Success.Count
		}
	}
	return 0
}
