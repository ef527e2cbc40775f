package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// Remote runs sessions on agents: a coordinator's fleet (internal/fleet).
// With Deps.Remote set, every session of the run is started on every
// agent instead of here; the engine receives each window once every agent
// reported it, merges the reports (MergeWindows) and decides stability,
// trials, interleaving and extensions exactly as for its own sessions, so
// the run has one result and one verdict.
type Remote interface {
	// Lead is how far ahead of now a session's epoch must lie for every
	// agent to have its start before the epoch.
	Lead() time.Duration
	// Start starts spec on every agent.
	Start(ctx context.Context, spec SessionSpec) RemoteSession
	// Agents names the agents in index order, for messages.
	Agents() []string
}

// RemoteSession is one session on every agent.
type RemoteSession interface {
	// Windows yields each window once every agent reported it, the
	// reports in agent order. It is closed when the session ends: every
	// agent finished it, it was stopped, or it failed.
	Windows() <-chan []WindowReport
	// Stop ends the session on every agent and returns their totals in
	// agent order. The error says why the session could not be measured
	// (an agent lost, a window an agent never sent), naming the agent.
	Stop() ([]Totals, error)
}

// remoteSession is a RemoteSession as the engine's loadSession: merged
// windows out, agents' totals merged at the stop.
type remoteSession struct {
	rs       RemoteSession
	names    []string
	whole    bool
	windows  chan *acc
	stopping chan struct{}
	once     sync.Once
	done     chan struct{}
	mergeErr error

	stopOnce sync.Once
	stats    *aggStats
	err      error
}

// epoch is the zero of the next session's clock: now, or with agents far
// enough ahead for every agent to start on it.
func (rs *runState) epoch() time.Time {
	now := time.Now()
	if r := rs.deps.Remote; r != nil {
		return now.Add(r.Lead())
	}
	return now
}

// startRemote starts the point's session on every agent.
func (pr *pointRunner) startRemote(ctx context.Context, spec loadSpec, epoch time.Time) loadSession {
	r := pr.rs.deps.Remote
	ld := pr.p.Load
	ss := SessionSpec{ID: pr.rs.sessionIDs.Add(1), Point: pr.idx, Epoch: epoch, Warmup: pr.m.Warmup, Window: pr.m.Window,
		Whole: spec.whole, Budget: spec.budget, Concurrency: max(ld.Concurrency, 1),
		Seed: pr.rs.opts.Seed + uint64(pr.idx), Drain: pr.rs.opts.Drain}
	if ld.Mode == plan.LoadRequestRate {
		ss.Concurrency, ss.Rate, ss.Distribution, ss.MaxThreads = 0, ld.Rate, ld.Distribution, ld.MaxThreads
	}
	s := &remoteSession{rs: r.Start(ctx, ss), names: r.Agents(), whole: spec.whole,
		windows: make(chan *acc, 16), stopping: make(chan struct{}), done: make(chan struct{})}
	go s.pump()
	return s
}

// pump merges each window of every agent into one and hands it on; after a
// stop, or a window that cannot be merged, it drains the rest.
func (s *remoteSession) pump() {
	defer close(s.done)
	defer close(s.windows)
	for reps := range s.rs.Windows() {
		if s.mergeErr != nil {
			continue
		}
		a, err := MergeWindows(reps, s.whole)
		if err != nil {
			s.mergeErr = err
			continue
		}
		select {
		case s.windows <- a:
		case <-s.stopping:
		}
	}
}

func (s *remoteSession) out() <-chan *acc { return s.windows }

func (s *remoteSession) requestStop(time.Duration) {
	s.once.Do(func() { close(s.stopping) })
}

func (s *remoteSession) stop(time.Duration) (*aggStats, error) {
	s.requestStop(0)
	s.stopOnce.Do(func() {
		totals, err := s.rs.Stop()
		<-s.done
		s.stats = mergeTotals(s.names, totals)
		for i, t := range totals {
			if t.Err != "" && err == nil {
				err = errors.New(s.names[i] + ": " + t.Err)
			}
		}
		if err == nil {
			err = s.mergeErr
		}
		s.err = err
	})
	return s.stats, s.err
}

func (s *remoteSession) wait() (*acc, *aggStats, error) {
	var last *acc
	for a := range s.windows {
		last = a
	}
	st, err := s.stop(0)
	return last, st, err
}
