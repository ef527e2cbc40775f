package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// unit is what runs at one time: one point, or the points of one step of a
// mix (plan.Point.Together). Every member's session starts from the same
// epoch, so their windows are cut on the same boundaries: window k of
// every member covers the same seconds, and a mix's figures all come from
// the same load. A unit is stable when every member is (see stabilize).
type unit struct {
	rs  *runState
	prs []*pointRunner
	mix string // the mix's name; "" for a point on its own
	// total holds the whole mix's figures once the unit is finished.
	total *result.Point
}

// memberError is a window that ended the unit because of one member: a
// mix whose member cannot be measured is not the mix the scenario asks
// for, so no member of it is.
type memberError struct {
	pr  *pointRunner
	err error
}

func (e *memberError) Error() string { return e.err.Error() }
func (e *memberError) Unwrap() error { return e.err }

// segment runs one stretch of load on every member from one epoch, handing
// each closed window of all members (in member order) to next until it
// returns false.
func (u *unit) segment(ctx context.Context, next func(ms []*measured) bool) (err error) {
	epoch := u.rs.epoch()
	sess := make([]loadSession, len(u.prs))
	for i, pr := range u.prs {
		sess[i] = pr.start(ctx, pr.spec(), epoch)
	}
	drain := u.rs.opts.Drain
	defer func() {
		if ctx.Err() != nil {
			drain = min(drain, interruptDrain)
		}
		for _, s := range sess {
			s.requestStop(drain)
		}
		for i, s := range sess {
			st, serr := s.stop(drain)
			u.prs[i].absorb(st)
			if err == nil && serr != nil {
				err = failure.Env(u.memberErr(u.prs[i], u.prs[i].withDominant(serr)))
			}
		}
	}()
	warm := u.prs[0].m.Warmup
	if !sleepUntil(ctx, epoch.Add(warm)) {
		return errInterrupted
	}
	before := make([]snapshotState, len(u.prs))
	for i, pr := range u.prs {
		before[i].counters, before[i].ok = pr.snapshot(ctx)
		before[i].proc = pr.procRead(ctx, len(u.prs))
	}
	cpuBefore, haveCPU := u.rs.sampleCPU()
	ms := make([]*measured, len(u.prs))
	for {
		for i, pr := range u.prs {
			select {
			case <-ctx.Done():
				return errInterrupted
			case w, ok := <-sess[i].out():
				if !ok {
					if ctx.Err() != nil {
						return errInterrupted
					}
					return nil // a session ended on its own (a worker failed to start)
				}
				var server *result.ServerStats
				if before[i].ok {
					after, ok := pr.snapshot(ctx)
					if ok {
						server = serverDelta(before[i].counters, after)
						pr.noteResolution(before[i].counters, after, server)
						before[i].counters = after
					}
					before[i].ok = ok
				}
				after := pr.procRead(ctx, len(u.prs))
				ms[i] = pr.record(w, epoch, server)
				ms[i].proc = procWindow(before[i].proc, after, server, w.n*int64(max(pr.p.BatchSize, 1)))
				ms[i].met.Process = ms[i].proc
				before[i].proc = after
			}
		}
		if haveCPU {
			var now CPUSample
			if now, haveCPU = u.rs.sampleCPU(); haveCPU {
				d := disturbance(cpuBefore, now)
				u.besideServers(d, ms)
				for _, m := range ms {
					m.win.Disturbance = d
					withWork(m.proc, d)
				}
				cpuBefore = now
			}
		}
		for i, pr := range u.prs {
			w := ms[i].acc
			if w.n == 0 && w.unreachable > 0 && w.unreachable == w.errs {
				return failure.Env(u.memberErr(pr, fmt.Errorf("%w: no request in window %d succeeded (%d transport failures); %s",
					ErrUnreachable, ms[i].win.Index+1, w.errs, w.classes.dominant())))
			}
		}
		for i, pr := range u.prs {
			if err := pr.emptyWindow(ms[i].acc, ms[i], false); err != nil {
				return &memberError{pr: pr, err: err}
			}
		}
		if !next(ms) {
			return nil
		}
	}
}

type snapshotState struct {
	counters kinds.Counters
	ok       bool
	proc     procState
}

// memberErr names the member of a mix an error is about.
func (u *unit) memberErr(pr *pointRunner, err error) error {
	if u.mix == "" {
		return err
	}
	return fmt.Errorf("%s: %w", pr.p.Model, err)
}

// stabilize measures windows until the unit is stable (or its window budget
// is spent) as keptRule says, every member by its own rule: a unit is
// stable at a window when every member is stable at it. It returns the
// index of the first kept window, or -1 when unstable.
func (u *unit) stabilize(ctx context.Context, keepGoing bool) (int, error) {
	rules := make([]keptRule, len(u.prs))
	for i, pr := range u.prs {
		rules[i] = newKeptRule(pr.m, keepGoing, pr.p.Load.Async)
	}
	first := len(u.prs[0].windows)
	stableAt := -1
	announced := make([]bool, len(u.prs))
	err := u.segment(ctx, func(ms []*measured) bool {
		all, more, stopped := true, false, false
		at := -1
		lat := make([]bool, len(u.prs))
		for i, pr := range u.prs {
			mine := pr.windowsOf(pr.windows[first:])
			justStable := false
			if !announced[i] {
				// The progress line says "stable" when perf_analyzer would.
				if st, _ := isStable(mine, rules[i].pct, rules[i].async); st {
					announced[i], justStable = true, true
				}
			}
			u.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &ms[i].win, Metrics: &ms[i].met, Stable: justStable, Start: ms[i].start, End: ms[i].end})
			if pr.abortAt(ms[i]) {
				stopped = true
			}
			a, m, l := rules[i].decide(mine)
			if a < 0 {
				all = false
			}
			at, lat[i] = a, l
			more = more || m
		}
		if stopped {
			u.abortWith()
			return false
		}
		if all && at >= 0 {
			stableAt = first + at
			for i, pr := range u.prs {
				if lat[i] {
					pr.notes = append(pr.notes, "latency is not stabilizing; stabilized on throughput alone (async load)")
				}
			}
			return false
		}
		return more
	})
	return stableAt, err
}

// standalone measures a unit on its own.
func (u *unit) standalone(ctx context.Context) (bool, error) {
	if len(u.prs) == 1 && fixedCount(u.prs[0].p.Load) {
		return u.prs[0].iterations(ctx)
	}
	if len(u.prs) == 1 && u.prs[0].p.Stage != nil {
		return u.outcome(u.ramp(ctx))
	}
	first := len(u.prs[0].windows)
	stableAt, err := u.stabilize(ctx, true)
	for _, pr := range u.prs {
		switch {
		case pr.aborted != "":
			pr.status = result.PointAborted
			pr.keep(first, len(pr.windows))
		case stableAt >= 0:
			pr.status = result.PointStable
			pr.keep(stableAt, len(pr.windows))
		default:
			pr.status = result.PointUnstable
			from := max(len(pr.windows)-keepCount(pr.m.Trials), 0)
			pr.keep(from, len(pr.windows))
			pr.noteSpread(from)
		}
	}
	return u.outcome(err)
}

// outcome splits a segment error into interrupted or fatal; a point that
// could not be measured fails its unit's every member.
func (u *unit) outcome(err error) (bool, error) {
	if errors.Is(err, errInterrupted) {
		return true, nil
	}
	if errors.Is(err, errPointFailed) {
		var me *memberError
		if errors.As(err, &me) {
			me.pr.failure = me.err
			for _, pr := range u.prs {
				if pr != me.pr && pr.failure == nil {
					pr.failure = fmt.Errorf("%w: %s could not be measured, so neither could mix %s: %v", errPointFailed, me.pr.p.Model, u.mix, me.err)
				}
			}
			return false, nil
		}
		for _, pr := range u.prs {
			pr.failure = err
		}
		return false, nil
	}
	return false, err
}

// failed says whether the unit could not be measured.
func (u *unit) failed() bool {
	for _, pr := range u.prs {
		if pr.failure != nil {
			return true
		}
	}
	return false
}

// round measures one kept window of an interleaved unit in a session of
// its own. A window in which no request of some member finished, neither
// answered nor failed, is passed over and the session's next window kept
// instead: each round starts a fresh session whose first requests also
// dial, and on a starved machine the first window can end before any of
// them returns. Such a window holds no measurement of the server, and as
// a trial it would leave the comparison a trial short. After
// maxPassedOver such windows in a row the round keeps what it has (the
// request outlasts many windows: the verdict then sees trials without
// data).
func (u *unit) round(ctx context.Context) error {
	passed := 0
	return u.segment(ctx, func(ms []*measured) bool {
		empty := false
		for _, m := range ms {
			if m.acc.n == 0 && m.acc.errs == 0 {
				empty = true
			}
		}
		if empty && passed < u.maxPassedOver() {
			passed++
			for _, pr := range u.prs {
				pr.passedOver++
			}
			return true
		}
		for i, pr := range u.prs {
			u.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &ms[i].win, Metrics: &ms[i].met, Start: ms[i].start, End: ms[i].end})
			pr.kept = append(pr.kept, len(pr.windows)-1)
		}
		return false
	})
}

// maxPassedOver is how many empty windows in a row a round passes over:
// as many as stabilizing the point may take.
func (u *unit) maxPassedOver() int {
	return max(u.prs[0].m.MaxTrials, stabilityWindow)
}

// aborted says whether an abort_on condition stopped the unit.
func (u *unit) aborted() bool {
	for _, pr := range u.prs {
		if pr.aborted != "" {
			return true
		}
	}
	return false
}

// abortWith stops every member of a mix with the member an abort_on
// condition stopped: the mix is one load, and without that member it is
// not the load the scenario asks for.
func (u *unit) abortWith() {
	var by *pointRunner
	for _, pr := range u.prs {
		if pr.aborted != "" {
			by = pr
			break
		}
	}
	for _, pr := range u.prs {
		if pr.aborted == "" {
			pr.aborted = fmt.Sprintf("stopped with %s (%s)", by.p.Model, by.aborted)
			pr.notes = append(pr.notes, "aborted: "+pr.aborted)
		}
	}
}

// iterationsOnly says whether the unit is one point of a fixed request
// count, which has no windows to alternate or extend.
func (u *unit) iterationsOnly() bool {
	return len(u.prs) == 1 && fixedCount(u.prs[0].p.Load)
}

// fixedCount says the load sends a fixed number of requests measured in
// one window: iterations, or one pass of a trace.
func fixedCount(ld plan.Load) bool {
	return ld.Mode == plan.LoadIterations || ld.Distribution == plan.TraceSchedule
}

// finish assembles the members' results and, for a mix, the whole mix's.
func (u *unit) finish(interrupted bool, err error) []*result.Point {
	out := make([]*result.Point, len(u.prs))
	for i, pr := range u.prs {
		out[i] = pr.finish(interrupted, err)
	}
	if u.mix != "" && len(u.prs) > 1 {
		u.total = mixTotal(u, out)
	}
	return out
}
