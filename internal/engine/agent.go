package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// AgentRun runs a coordinator's sessions of a plan on an agent: the same
// workers, pacing and windows as a run of its own, with the agent's share
// of each point's load, the session clock the coordinator gives, and the
// closed windows handed back as mergeable reports instead of decided here.
type AgentRun struct {
	plan    *plan.Plan
	servers map[string]*serverState
	opts    Options
	seqIDs  atomic.Uint64

	mu     sync.Mutex
	points map[int]*pointLoad
}

// NewAgentRun prepares agent index's sessions of p on servers (opened by
// their kinds, as for a run). Correlation ids of sequence models are
// unique per agent: the agent's index is in their high bits.
func NewAgentRun(p *plan.Plan, servers map[string]kinds.Server, index int, opts Options) (*AgentRun, error) {
	byName, _, err := newServers(p, Deps{Servers: servers})
	if err != nil {
		return nil, err
	}
	a := &AgentRun{plan: p, servers: byName, opts: opts.withDefaults(), points: map[int]*pointLoad{}}
	a.seqIDs.Store(uint64(index+1) << 40)
	return a, nil
}

// Close frees every point prepared.
func (a *AgentRun) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, pl := range a.points {
		pl.kind.Close()
	}
	a.points = map[int]*pointLoad{}
}

// point prepares plan point i once.
func (a *AgentRun) point(ctx context.Context, i int) (*pointLoad, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if pl, ok := a.points[i]; ok {
		return pl, nil
	}
	if i < 0 || i >= len(a.plan.Points) {
		return nil, failure.Invalid(fmt.Errorf("the coordinator asked for point %d; the plan has %d", i, len(a.plan.Points)))
	}
	pt := &a.plan.Points[i]
	ss, ok := a.servers[pt.Server]
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("server %q is not in the plan", pt.Server))
	}
	m, ok := a.plan.Model(pt.Model)
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", pt.Model))
	}
	pl, err := newPointLoad(ctx, a.plan, ss, pt, m, a.opts, &a.seqIDs)
	if err != nil {
		return nil, err
	}
	a.points[i] = pl
	return pl, nil
}

// Session runs this agent's shard of spec from epoch (the session clock's
// zero on this host's clock), handing each closed window to report, until
// stop is closed or ctx ends (or, for a whole session, until its requests
// are done). It returns the session's totals.
func (a *AgentRun) Session(ctx context.Context, spec SessionSpec, sh Shard, epoch time.Time, stop <-chan struct{}, report func(WindowReport)) Totals {
	pl, err := a.point(ctx, spec.Point)
	if err != nil {
		return Totals{Err: err.Error()}
	}
	ls := loadSpec{workers: max(sh.Workers, 1), drain: spec.Drain, whole: spec.Whole, budget: sh.Budget,
		cut: cutter{warmupEnd: spec.Warmup, window: spec.Window}, cursorBase: sh.WorkerBase, cursorTotal: sh.WorkerTotal}
	if ls.drain <= 0 {
		ls.drain = a.opts.Drain
	}
	if sh.Rate > 0 {
		ls.rate = true
		ls.pacer = phased{Pacer: newPacer(a.plan.Points[spec.Point].Load, sh.Rate, sh.Seed), phase: sh.Phase}
		ls.maxWorkers = sh.MaxWorkers
		if pl.sequence {
			ls.maxWorkers = ls.workers // one live sequence per worker
		}
	}
	if spec.Whole && sh.Budget == 0 && spec.Budget > 0 {
		// No request of a small budget fell to this agent.
		return Totals{}
	}
	sess := startSession(ctx, pl, ls, epoch)
	if spec.Whole {
		w, st, err := sess.wait()
		if w != nil {
			if r, rerr := reportOf(w, 0); rerr == nil {
				report(r)
			} else if err == nil {
				err = rerr
			}
		}
		return totalsOf(st, err)
	}
	k := 0
loop:
	for {
		select {
		case w, ok := <-sess.out():
			if !ok {
				break loop
			}
			r, err := reportOf(w, k)
			if err != nil {
				st, _ := sess.stop(ls.drain)
				return totalsOf(st, err)
			}
			report(r)
			k++
		case <-stop:
			break loop
		}
	}
	st, err := sess.stop(ls.drain)
	return totalsOf(st, err)
}
