package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/perfscen/perfscen/internal/agentpods"
	"github.com/perfscen/perfscen/internal/engine"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// fleetFlags make perfscen run the coordinator of a distributed run.
type fleetFlags struct {
	agents    int
	listen    string
	tokenFile string
	wait      time.Duration
	heartbeat time.Duration
	tlsCert   string
	tlsKey    string
	tlsCA     string
	agentPods string
}

func (f *fleetFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&f.agents, "agents", 0, "coordinate this many agents (perfscen agent) that generate the load; 0: load from this process")
	fl.StringVar(&f.listen, "listen", fleet.DefaultListen, "with --agents: where agents dial in (loopback unless told otherwise, e.g. 0.0.0.0:7700)")
	fl.StringVar(&f.tokenFile, "token-file", "", "with --agents: file holding the shared agent token (default: $"+fleet.TokenEnv+"; not needed with --agents-tls-client-ca)")
	fl.DurationVar(&f.wait, "agent-wait", fleet.DefaultWait, "with --agents: how long to wait for every agent to join and be ready before exit 3")
	fl.DurationVar(&f.heartbeat, "heartbeat", fleet.DefaultHeartbeat, "with --agents: heartbeat period; three missed lose an agent (exit 3)")
	fl.StringVar(&f.tlsCert, "agents-tls-cert", "", "with --agents: serve agents over TLS with this PEM certificate")
	fl.StringVar(&f.tlsKey, "agents-tls-key", "", "with --agents: the PEM key of --agents-tls-cert")
	fl.StringVar(&f.tlsCA, "agents-tls-client-ca", "", "with --agents: require agents' client certificates signed by this PEM CA (mutual TLS)")
	fl.StringVar(&f.agentPods, "agent-pods", "", "with --agents, in a Kubernetes pod: the agents' pods (labels key=value,…), read through the API server while waiting for agents to say why one is missing (never scheduled, image not pulled, failed); perfscen k8s sets it")
}

// podLister lists the pods selector picks in this pod's namespace, as
// its service account; tests replace it.
type podLister func(selector string) (func(ctx context.Context) ([]agentpods.Pod, error), error)

func inClusterPods(e *env) podLister {
	if e.pods != nil {
		return e.pods
	}
	return func(selector string) (func(ctx context.Context) ([]agentpods.Pod, error), error) {
		c, err := agentpods.InCluster(e.getenv, agentpods.ServiceAccountDir)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) ([]agentpods.Pod, error) { return c.Pods(ctx, selector) }, nil
	}
}

// startFleet checks that the plan can be sharded among the agents, listens
// for them and holds the barrier until all are ready.
func startFleet(e *env, pl *plan.Plan, f reportFlags) (*fleet.Coordinator, error) {
	if err := engine.CheckDistributed(pl, f.fleet.agents); err != nil {
		// The caller prints the scenario's path before the error.
		return nil, failure.Invalid(err)
	}
	if f.fleet.agentPods != "" {
		if err := agentpods.CheckSelector(f.fleet.agentPods); err != nil {
			return nil, failure.Invalid(fmt.Errorf("--agent-pods %q: %w", f.fleet.agentPods, err))
		}
	}
	token, err := fleet.LoadToken(f.fleet.tokenFile, e.getenv)
	if err != nil {
		return nil, failure.Invalid(err)
	}
	tlsCfg, err := fleet.ServerTLS(f.fleet.tlsCert, f.fleet.tlsKey, f.fleet.tlsCA)
	if err != nil {
		return nil, failure.Invalid(err)
	}
	id, err := e.fleetVersion()
	if err != nil {
		return nil, failure.Env(err)
	}
	c, err := fleet.Listen(fleet.CoordinatorOptions{Agents: f.fleet.agents, Listen: f.fleet.listen, Token: token,
		Version: id, Plan: pl, Heartbeat: f.fleet.heartbeat, Wait: f.fleet.wait, Log: e.stderr, Net: e.net, TLS: tlsCfg})
	if err != nil {
		return nil, err
	}
	if err := waitReady(e, c, f.fleet); err != nil {
		c.Finish("the run could not start: "+err.Error(), exitcode.Of(err))
		return nil, err
	}
	return c, nil
}

// waitReady holds the barrier; with --agent-pods it watches the agents'
// pods meanwhile, warns as soon as Kubernetes says why some are missing,
// and adds Kubernetes' last word to a give-up.
func waitReady(e *env, c *fleet.Coordinator, f fleetFlags) error {
	if f.agentPods == "" {
		return c.WaitReady(e.ctx)
	}
	list, err := inClusterPods(e)(f.agentPods)
	if err != nil {
		fmt.Fprintf(e.stderr, "perfscen: warning: --agent-pods: %v; a missing agent cannot be explained\n", err)
		return c.WaitReady(e.ctx)
	}
	w := &agentpods.Watcher{List: list, Agents: f.agents, Log: e.stderr, Wait: f.wait, Interval: agentpods.IntervalFor(f.agents)}
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	err = c.WaitReady(e.ctx)
	stop()
	<-done
	if err != nil && e.ctx.Err() == nil {
		if why := w.Final(e.ctx); why != "" {
			// The kind (exit 2 or 3) is the coordinator's.
			err = fmt.Errorf("%w; Kubernetes: %s", err, why)
		}
	}
	return err
}

// finishFleet ends the agents' part and records them in the result.
func finishFleet(e *env, c *fleet.Coordinator, run *result.Run) {
	reason := "run ended"
	if run != nil {
		run.Agents = c.Info()
		for _, r := range c.Refused() {
			run.Notes = append(run.Notes, "refused "+r)
		}
		if run.Verdict != nil {
			reason = "run ended: " + run.Verdict.Summary
		}
	}
	// A run cut short by a signal (the coordinator's pod deleted, the
	// job cancelled) did not end: the agents exit with its code, so their
	// Job fails with the coordinator's instead of reading Complete.
	code := 0
	if e.ctx.Err() != nil {
		code = exitcode.Environment
		if run != nil && run.Verdict != nil && run.Verdict.ExitCode != 0 {
			code = run.Verdict.ExitCode
		}
		reason = "the coordinator was interrupted (SIGINT or SIGTERM): " + reason
	}
	c.Finish(reason, code)
	windows, bytes := c.Cost()
	if n := len(c.Agents()); windows > 0 && n > 0 {
		in, out := c.Wire()
		fmt.Fprintf(e.stderr, "perfscen: %d agent(s) sent %d window report(s), %d bytes: %.0f bytes per agent per window (report messages alone)\n",
			n, windows, bytes, float64(bytes)/float64(windows))
		fmt.Fprintf(e.stderr, "perfscen: the agents' connections carried %d bytes in, %d out (all of it: framing, TLS, clock probes, heartbeats, control): %.0f in and %.0f out per agent per window\n",
			in, out, float64(in)/float64(windows), float64(out)/float64(windows))
	}
}
