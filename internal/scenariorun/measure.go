package scenariorun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/all"
	"github.com/perfscen/perfscen/internal/search"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Options tune a scenario run.
type Options struct {
	// Version is perfscen's version, recorded in the result.
	Version string
	// Progress, when set, hears of points starting, windows closing and
	// points finishing, from the run's goroutine.
	Progress func(engine.Event)
	// ConnectTimeout bounds the wait for each server to become ready
	// (default kinds.DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Testbed names the testbed the run is filed under; empty takes the
	// scenario's baseline.testbed, else the engine derives one from the
	// hardware and the servers.
	Testbed engine.TestbedName
	// NoBaseline decides without the baseline history.
	NoBaseline bool
	// Log hears of the sequential looks (extra trials, budgets spent);
	// nil discards.
	Log interface{ Write([]byte) (int, error) }
	// Engine passes settings through to the engine (tests: drain,
	// window granularity, the clock).
	Engine engine.Options
	// Net, when set, carries the embedded servers and every client
	// connection in memory instead of TCP on loopback, so tests can run a
	// whole scenario under testing/synctest's fake clock.
	Net *kinds.Net
	// Remote, when set, runs the load on agents (a coordinator's fleet);
	// the servers are still opened here, for their checks and statistics.
	Remote engine.Remote
	// Probed, when set, hears of each probe of a search once it is judged.
	Probed func(s *plan.Search, pr result.Probe)
}

// Measure runs the plan without deciding it. The result is returned
// whenever anything was measured, together with the error that stopped
// the run, so partial figures are never lost. Errors carry their failure
// kind.
//
// With several servers every one is started or reached through its kind,
// asked what it has, and given its checked input data before any load is
// sent to any of them: a candidate build that lacks a model stops the run
// before the released one is measured for nothing.
func Measure(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, error) {
	ctl := search.New(p)
	run, err := measure(ctx, p, opts, nil, ctl)
	return ctl.Attach(run), err
}

func measure(ctx context.Context, p *plan.Plan, opts Options, extend func(*result.Run) ([]string, int), ctl *search.Controller) (*result.Run, error) {
	servers, notes, closeAll, err := OpenServers(ctx, withProbes(p), kinds.Env{ConnectTimeout: opts.ConnectTimeout, Net: opts.Net})
	if err != nil {
		return nil, err
	}
	defer closeAll()
	deps := engine.Deps{Servers: servers, Notes: notes, Remote: opts.Remote}
	var procWhat map[string]string
	if opts.Net == nil {
		// On the in-memory network of tests nothing is measured of the
		// machine: their figures must not depend on it.
		procs, what, closeProcs, err := locateProcesses(ctx, p, servers)
		if err != nil {
			return nil, err
		}
		defer closeProcs()
		deps.Processes, procWhat = procs, what
	}
	eo := opts.Engine
	eo.Version = opts.Version
	// An in-memory network is a test on a fake clock, where a spinning
	// wait would stop time.
	eo.PlainTimers = eo.PlainTimers || opts.Net != nil
	eo.Progress = opts.Progress
	eo.Testbed = testbed(p, opts.Testbed)
	eo.Extend = extend
	eo.Abort = abortHook(p)
	if ctl != nil {
		ctl.Probed = opts.Probed
		eo.Schedule = ctl.Next
	}
	run, err := engine.Run(ctx, p, deps, eo)
	if run != nil && procWhat != nil {
		run.Environment.Server.Process = procWhat[""]
		for i := range run.Environment.Servers {
			run.Environment.Servers[i].Process = procWhat[run.Environment.Servers[i].Key]
		}
	}
	return run, err
}

// OpenServers starts or reaches every server of p through its kind and
// has it check what the scenario needs of it, before any load: a candidate
// build that lacks a model stops the run before the released one is
// measured for nothing. closeAll closes them; notes are the servers'
// remarks for the result.
func OpenServers(ctx context.Context, p *plan.Plan, env kinds.Env) (map[string]kinds.Server, []string, func(), error) {
	opened := map[string]kinds.Server{}
	closeAll := func() {
		for _, s := range opened {
			s.Close()
		}
	}
	var notes []string
	for _, srv := range p.Servers {
		k, err := all.Kinds().Lookup(srv.Kind)
		if err != nil {
			closeAll()
			return nil, nil, nil, failure.Invalid(err)
		}
		s, err := k.Open(ctx, p.ForServer(srv), env)
		if err != nil {
			closeAll()
			if srv.Name != "" {
				return nil, nil, nil, fmt.Errorf("server %s: %w", srv.Name, err)
			}
			return nil, nil, nil, err
		}
		opened[srv.Name] = s
		for _, n := range s.Notes() {
			if srv.Name != "" {
				n = "server " + srv.Name + ": " + n
			}
			notes = append(notes, n)
		}
	}
	return opened, notes, closeAll, nil
}

// withProbes is p with each search's template among its points, for the
// kinds: they check and prepare, before any load, everything the points
// need (protocols, input data, shared memory), and a search's probes need
// what its template does.
func withProbes(p *plan.Plan) *plan.Plan {
	if len(p.Searches) == 0 {
		return p
	}
	out := *p
	out.Points = append(slices.Clone(p.Points), make([]plan.Point, 0, len(p.Searches))...)
	for i := range p.Searches {
		out.Points = append(out.Points, p.Searches[i].Probe(p.Searches[i].Start))
	}
	return &out
}

// testbed is the chosen testbed, else the scenario's.
func testbed(p *plan.Plan, chosen engine.TestbedName) engine.TestbedName {
	if chosen.Name == "" && p.Checks.Baseline != nil && p.Checks.Baseline.Testbed != "" {
		return engine.TestbedName{Name: p.Checks.Baseline.Testbed, Source: "scenario"}
	}
	return chosen
}
