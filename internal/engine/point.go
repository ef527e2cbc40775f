package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/validate"
)

// measured is one closed window with the figures gathered around it.
type measured struct {
	acc       *acc
	win       result.Window
	met       result.Metrics
	server    *result.ServerStats
	gpu       *result.GPUMetrics
	startWall time.Time
}

// pointRunner measures one plan point; it lives on the run's goroutine.
type pointRunner struct {
	rs    *runState
	ss    *serverState // the point's server
	idx   int
	p     *plan.Point
	model plan.Model
	pl    *pointLoad
	m     plan.Measurement

	statsOff bool // no more statistics calls: the server has none, or they failed
	windows  []*measured
	kept     []int // indexes into windows
	status   string

	// failure ends this point without ending the run (nothing succeeded
	// in a window): the point is failed, the next point is measured.
	failure error
	// refused counts consecutive windows without a success in which
	// requests failed, refusedErrs their failures.
	refused, refusedErrs int64

	errs       tally
	mismatches tally
	checked    int64
	late       int64
	notes      []string
	// passedOver counts interleaved windows passed over because no
	// request finished in them (see round).
	passedOver int
}

func (rs *runState) newPointRunner(ctx context.Context, i int) (*pointRunner, error) {
	p := &rs.plan.Points[i]
	ss, err := rs.server(p.Server)
	if err != nil {
		return nil, err
	}
	pr := &pointRunner{rs: rs, ss: ss, idx: i, p: p, m: rs.plan.Measurement}
	m, ok := rs.plan.Model(p.Model)
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", p.Model))
	}
	pr.model = m
	kp, err := ss.server.Point(ctx, p)
	if err != nil {
		return nil, err
	}
	data := kp.Data()
	offs, err := flatOffsets(data)
	if err != nil {
		kp.Close()
		return nil, failure.Invalid(err)
	}
	pl := &pointLoad{kind: kp, data: data, offsets: offs, sequence: m.Sequence, seqIDs: &rs.seqIDs,
		validateEvery: 1}
	if rs.plan.LLM != nil && ss.srv.Kind == plan.KindOpenAI {
		pl.llm = &genLoad{slo: rs.plan.LLM.Goodput, countChunks: rs.plan.LLM.TokenCount == "chunks"}
	}
	if m.Validate && data.HasExpected() {
		pl.validate = true
		if pr.m.Mode != plan.CountWindows && p.Load.Mode != plan.LoadIterations {
			pl.validateEvery = rs.opts.ValidateEvery
		}
		// Every worker draws from one sampler, so the point's first
		// responses are checked whichever workers answer them.
		pl.sampler = validate.NewSampler(validateFirst, pl.validateEvery)
	}
	pr.pl = pl
	return pr, nil
}

func (pr *pointRunner) cleanup() {
	if err := pr.pl.kind.Close(); err != nil {
		pr.notes = append(pr.notes, err.Error())
	}
}

// spec is how a session of this point drives load.
func (pr *pointRunner) spec() loadSpec {
	ld := pr.p.Load
	o := pr.rs.opts
	s := loadSpec{workers: max(ld.Concurrency, 1), drain: o.Drain,
		cut: cutter{warmupEnd: pr.m.Warmup, window: pr.m.Window}}
	if pr.m.Mode == plan.CountWindows {
		s.cut.count = true
		s.cut.minCount = int64(max(pr.m.RequestCount, 1))
		s.cut.step = o.MinCountWindow
		s.cut.maxLen = o.MaxCountWindow
	}
	if ld.Mode == plan.LoadRequestRate {
		s.rate = true
		s.pacer = newPacer(ld.Distribution, ld.Rate, o.Seed+uint64(pr.idx))
		s.maxWorkers = ld.MaxThreads
		s.workers = ld.MaxThreads
		if s.workers <= 0 {
			s.workers = 4 // perf_analyzer's rate-mode thread default; grows on demand
		}
		if pr.model.Sequence {
			s.maxWorkers = s.workers // one live sequence per worker
		}
	}
	return s
}

// record turns a closed window into a measured one and reports it.
func (pr *pointRunner) record(w *acc, epoch time.Time, server *result.ServerStats) *measured {
	batch := max(pr.p.BatchSize, 1)
	dur := w.end - w.start
	met := w.metrics(batch, dur)
	m := &measured{acc: w, server: server, met: met, startWall: pr.rs.opts.Now().Add(-time.Since(epoch.Add(w.start)))}
	m.win = result.Window{Index: len(pr.windows), Duration: dur, Throughput: met.Throughput,
		LatencyUs: w.stabilityLatencyUs(pr.m.Percentile), Requests: w.n, Errors: w.errs}
	m.gpu = pr.ss.gpu.window(epoch.Add(w.start), epoch.Add(w.end))
	pr.windows = append(pr.windows, m)
	return m
}

func (pr *pointRunner) snapshot(ctx context.Context) (kinds.Counters, bool) {
	if pr.statsOff {
		return kinds.Counters{}, false
	}
	st, err := pr.pl.kind.Stats(ctx)
	if err != nil {
		pr.statsOff = true
		if ctx.Err() == nil && !errors.Is(err, kinds.ErrNoStats) {
			pr.notes = append(pr.notes, "server statistics unavailable: "+err.Error())
		}
		return st, false
	}
	return st, true
}

// absorb folds a finished session's totals into the point.
func (pr *pointRunner) absorb(st *aggStats) {
	pr.errs.merge(&st.errors)
	pr.mismatches.merge(&st.mismatches)
	pr.checked += st.checked
	pr.late += st.late
}

// errInterrupted is returned by segment when ctx was cancelled.
// validateFirst is how many responses of a point are checked in full
// before time windows sample one in Options.ValidateEvery: a model giving
// wrong outputs is caught at its first responses, not after N.
const validateFirst = 100

var errInterrupted = errors.New("interrupted")

// segment runs one session of load, handing each closed window to next until
// next returns false.
func (pr *pointRunner) segment(ctx context.Context, next func(m *measured) bool) (err error) {
	sess := startSession(ctx, pr.pl, pr.spec())
	defer func() {
		st, serr := sess.stop(pr.rs.opts.Drain)
		pr.absorb(st)
		if err == nil && serr != nil {
			err = failure.Env(serr)
		}
	}()
	if !sleepUntil(ctx, sess.epoch.Add(pr.m.Warmup)) {
		return errInterrupted
	}
	before, haveStats := pr.snapshot(ctx)
	cpuBefore, haveCPU := pr.rs.sampleCPU()
	for {
		select {
		case <-ctx.Done():
			return errInterrupted
		case w, ok := <-sess.windows:
			if !ok {
				if ctx.Err() != nil {
					return errInterrupted
				}
				return nil // the session ended on its own (a worker failed to start)
			}
			var server *result.ServerStats
			if haveStats {
				after, ok := pr.snapshot(ctx)
				if ok {
					server = serverDelta(before, after)
					before = after
				}
				haveStats = ok
			}
			m := pr.record(w, sess.epoch, server)
			if haveCPU {
				var now CPUSample
				if now, haveCPU = pr.rs.sampleCPU(); haveCPU {
					m.win.Disturbance = disturbance(cpuBefore, now)
					cpuBefore = now
				}
			}
			if w.n == 0 && w.unreachable > 0 && w.unreachable == w.errs {
				return failure.Env(fmt.Errorf("%w: no request in window %d succeeded (%d transport failures)", ErrUnreachable, m.win.Index, w.errs))
			}
			if err := pr.emptyWindow(w, m, false); err != nil {
				return err
			}
			if !next(m) {
				return nil
			}
		}
	}
}

// errPointFailed marks a point that cannot be measured while the server
// still answers (every request refused, or none completing in a count
// window's longest time); the run goes on to the next point.
var errPointFailed = errors.New("point could not be measured")

// minRefused is how many failures, with no success among them, a point
// needs before it is given up as refused.
const minRefused = 10

// emptyWindow decides a window without one successful request. When
// requests failed and none succeeded in three windows in a row, with at
// least minRefused failures among them (one short window can fall between
// two slow successes), no later window will differ in kind, so the point
// stops with the server's first error rather than running to max_trials
// as "unstable". A whole-load window (iterations) decides at once. A count
// window that reached its longest time with nothing completed stops the
// point too.
func (pr *pointRunner) emptyWindow(w *acc, m *measured, whole bool) error {
	if w.n > 0 {
		pr.refused, pr.refusedErrs = 0, 0
		return nil
	}
	if w.errs > 0 {
		pr.refused++
		pr.refusedErrs += w.errs
		// A starved machine or a few slow timeouts can leave short windows
		// without a success; a server refusing every request fails many.
		if !whole && (pr.refused < stabilityWindow || pr.refusedErrs < minRefused) {
			return nil
		}
		msg := fmt.Sprintf("no request succeeded (%d failed in window %d)", w.errs, m.win.Index)
		if first := pr.errs.first(); len(first) > 0 {
			msg += "; first error: " + first[0]
		}
		return fmt.Errorf("%w: %s", errPointFailed, msg)
	}
	if pr.m.Mode == plan.CountWindows && m.win.Duration >= pr.rs.opts.MaxCountWindow {
		return fmt.Errorf("%w: no request completed in %s (count window limit)", errPointFailed, m.win.Duration)
	}
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (pr *pointRunner) windowsOf(ms []*measured) []result.Window {
	out := make([]result.Window, len(ms))
	for i, m := range ms {
		out[i] = m.win
	}
	return out
}

// stabilize measures windows until the point is stable (or its window
// budget is spent) as keptRule says. It returns the index of the first
// kept window, or -1 when unstable.
func (pr *pointRunner) stabilize(ctx context.Context, keepGoing bool) (int, error) {
	rule := newKeptRule(pr.m, keepGoing, pr.p.Load.Async)
	first := len(pr.windows)
	stableAt := -1
	announced := false
	err := pr.segment(ctx, func(m *measured) bool {
		mine := pr.windowsOf(pr.windows[first:])
		justStable := false
		if !announced {
			// The progress line says "stable" when perf_analyzer would.
			if st, _ := isStable(mine, rule.pct, rule.async); st {
				announced, justStable = true, true
			}
		}
		pr.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win, Metrics: &m.met, Stable: justStable})
		at, more, latUnstable := rule.decide(mine)
		if at >= 0 {
			stableAt = first + at
			if latUnstable {
				pr.notes = append(pr.notes, "latency is not stabilizing; stabilized on throughput alone (async load)")
			}
		}
		return more
	})
	return stableAt, err
}

// standalone measures a point on its own.
func (pr *pointRunner) standalone(ctx context.Context) (bool, error) {
	if pr.p.Load.Mode == plan.LoadIterations {
		return pr.iterations(ctx)
	}
	stableAt, err := pr.stabilize(ctx, true)
	switch {
	case stableAt >= 0:
		pr.status = result.PointStable
		pr.keep(stableAt, len(pr.windows))
	default:
		pr.status = result.PointUnstable
		from := max(len(pr.windows)-keepCount(pr.m.Trials), 0)
		pr.keep(from, len(pr.windows))
		pr.noteSpread(from)
	}
	return pr.outcome(err)
}

// noteSpread says how far apart the kept windows of an unstable point
// are, naming what failed the rule: throughput, latency or both.
func (pr *pointRunner) noteSpread(from int) {
	ws := pr.windowsOf(pr.windows[from:])
	pct := pr.m.StabilityPct
	limit := 1 + pct/100
	var parts []string
	for _, f := range []struct {
		name string
		r    float64
	}{{"throughput", spread(ws)}, {"latency", latencySpread(ws)}} {
		if f.r > limit {
			parts = append(parts, fmt.Sprintf("%s spans max/min %.2f", f.name, f.r))
		}
	}
	if len(parts) > 0 {
		pr.notes = append(pr.notes, fmt.Sprintf("kept windows' %s, over the stability limit %.2f (stability %g%%)", strings.Join(parts, " and "), limit, pct))
	}
}

func (pr *pointRunner) keep(from, to int) {
	for i := from; i < to; i++ {
		pr.kept = append(pr.kept, i)
	}
}

// outcome splits a segment error into interrupted or fatal.
func (pr *pointRunner) outcome(err error) (bool, error) {
	if errors.Is(err, errInterrupted) {
		return true, nil
	}
	if errors.Is(err, errPointFailed) {
		pr.failure = err
		return false, nil
	}
	return false, err
}

// iterations is perf_analyzer's --request-count: drop the warm-up requests,
// then measure exactly Iterations requests in one window.
func (pr *pointRunner) iterations(ctx context.Context) (bool, error) {
	ld := pr.p.Load
	spec := pr.spec()
	spec.whole = true
	if ld.WarmupIterations > 0 {
		spec.budget = int64(ld.WarmupIterations)
		_, st, err := startSession(ctx, pr.pl, spec).wait()
		// Warm-up failures still say something about the server.
		pr.errs.merge(&st.errors)
		if err != nil {
			return false, failure.Env(err)
		}
	}
	if ctx.Err() != nil {
		return true, nil
	}
	before, haveStats := pr.snapshot(ctx)
	spec.budget = int64(max(ld.Iterations, 1))
	sess := startSession(ctx, pr.pl, spec)
	w, st, err := sess.wait()
	pr.absorb(st)
	if err != nil {
		return false, failure.Env(err)
	}
	var server *result.ServerStats
	if haveStats {
		if after, ok := pr.snapshot(ctx); ok {
			server = serverDelta(before, after)
		}
	}
	if w != nil {
		m := pr.record(w, sess.epoch, server)
		pr.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win, Metrics: &m.met, Stable: true})
		pr.kept = append(pr.kept, len(pr.windows)-1)
	}
	if ctx.Err() != nil {
		return true, nil
	}
	pr.status = result.PointStable
	if w != nil && w.n == 0 && w.unreachable > 0 && w.unreachable == w.errs {
		return false, failure.Env(fmt.Errorf("%w: none of %d requests succeeded", ErrUnreachable, w.errs))
	}
	if w != nil {
		return pr.outcome(pr.emptyWindow(w, pr.windows[len(pr.windows)-1], true))
	}
	return false, nil
}
