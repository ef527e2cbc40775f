package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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
	met       result.Metrics // the window's figures, as recorded
	win       result.Window
	server    *result.ServerStats
	proc      *result.ProcessStats
	gpu       *result.GPUMetrics
	engine    *result.EngineMetrics // the LLM engine's own figures
	startWall time.Time
	// start and end are the window's bounds on the session's clock.
	start, end time.Time
}

// pointRunner measures one plan point; it lives on the run's goroutine.
type pointRunner struct {
	rs    *runState
	ss    *serverState // the point's server
	idx   int
	p     *plan.Point
	model plan.Model
	pl    *pointLoad
	// coarseNoted: the point's notes already say its server figures are
	// coarse (noteResolution).
	coarseNoted bool
	m           plan.Measurement

	statsOff bool // no more statistics calls: the server has none, or they failed
	procOff  bool // no more accounting reads: one failed
	windows  []*measured
	kept     []int // indexes into windows
	status   string

	// failure ends this point without ending the run (nothing succeeded
	// in a window): the point is failed, the next point is measured.
	failure error
	// refused counts consecutive windows without a success in which
	// requests failed, refusedErrs their failures, refusedClasses their
	// classes.
	refused, refusedErrs int64
	refusedClasses       classTally

	errs       tally
	classes    classTally
	mismatches tally
	checked    int64
	late       int64
	notes      []string
	// passedOver counts interleaved windows passed over because no
	// request finished in them (see round).
	passedOver int
	// aborted is why an abort_on condition stopped the point; stopRun
	// says the run stops with it.
	aborted string
	stopRun bool
}

func (rs *runState) newPointRunner(ctx context.Context, i int) (*pointRunner, error) {
	p := &rs.plan.Points[i]
	ss, err := rs.server(p.Server)
	if err != nil {
		return nil, err
	}
	pr := &pointRunner{rs: rs, ss: ss, idx: i, p: p, m: rs.plan.Measurement}
	if p.Stage != nil {
		// A ramp changes the point's load window by window: on a copy.
		cp := *p
		pr.p = &cp
		pr.m.Warmup = 0
	}
	m, ok := rs.plan.Model(p.Model)
	if !ok {
		return nil, failure.Invalid(fmt.Errorf("model alias %q is not in the plan's models", p.Model))
	}
	pr.model = m
	pl, err := newPointLoad(ctx, rs.plan, ss, p, m, rs.opts, &rs.seqIDs)
	if err != nil {
		return nil, err
	}
	if f := rs.opts.Requests; f != nil && rs.deps.Remote == nil {
		pt := pr.p
		pl.record = func(r *Record) { f(pt, r) }
	}
	pr.pl = pl
	return pr, nil
}

// newPointLoad prepares point p of model m on its server for load: the
// kind's point, its input data, validation.
func newPointLoad(ctx context.Context, p *plan.Plan, ss *serverState, pt *plan.Point, m plan.Model, opts Options, seqIDs *atomic.Uint64) (*pointLoad, error) {
	kp, err := ss.server.Point(ctx, pt)
	if err != nil {
		return nil, err
	}
	data := kp.Data()
	offs, err := flatOffsets(data)
	if err != nil {
		kp.Close()
		return nil, failure.Invalid(err)
	}
	pl := &pointLoad{kind: kp, data: data, offsets: offs, sequence: m.Sequence, seqLen: m.SequenceLength,
		seqVariation: m.SequenceLengthVariation, seqIDs: seqIDs,
		validateEvery: 1, byTick: pt.Load.Distribution == plan.TraceSchedule}
	if p.LLM != nil && ss.srv.Kind == plan.KindOpenAI {
		pl.llm = &genLoad{slo: p.LLM.Goodput, countChunks: p.LLM.TokenCount == "chunks"}
	}
	if m.Validate && data.HasExpected() {
		pl.validate = true
		if p.Measurement.Mode != plan.CountWindows && !fixedCount(pt.Load) {
			pl.validateEvery = opts.ValidateEvery
		}
		// Every worker draws from one sampler, so the point's first
		// responses are checked whichever workers answer them, and each
		// entry's after them whichever worker sends it.
		entries := 0
		for _, st := range data.Streams {
			entries += len(st)
		}
		pl.sampler = validate.NewSampler(validateFirst, pl.validateEvery, entries)
	}
	return pl, nil
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
		s.pacer = newPacer(ld, ld.Rate, o.Seed+uint64(pr.idx))
		// A trace's sends are held to their timestamps to well under a
		// millisecond, which a plain timer cannot do (see coarseMargin).
		s.precise = ld.Distribution == plan.TraceSchedule && !o.PlainTimers
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
	m := &measured{acc: w, server: server, met: met, startWall: pr.rs.opts.Now().Add(-time.Since(epoch.Add(w.start))),
		start: epoch.Add(w.start), end: epoch.Add(w.end)}
	m.win = result.Window{Index: len(pr.windows), Duration: dur, Throughput: met.Throughput,
		LatencyUs: w.stabilityLatencyUs(pr.m.Percentile), Requests: w.n, Errors: w.errs}
	m.gpu = pr.ss.gpu.window(epoch.Add(w.start), epoch.Add(w.end))
	if pr.ss.engine != nil {
		// A reading just after the window's end: its counters' value there.
		pr.ss.engine.settle(context.Background())
		m.engine = pr.ss.engine.window(pr.model.Name, m.start, m.end)
		if m.engine != nil && m.met.LLM != nil {
			l := *m.met.LLM
			l.Engine = m.engine
			m.met.LLM = &l
		}
	}
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
	pr.classes.merge(&st.classes)
	pr.mismatches.merge(&st.mismatches)
	pr.checked += st.checked
	pr.late += st.late
}

// withDominant adds the point's dominant class of failure to err, which
// ended a session.
func (pr *pointRunner) withDominant(err error) error {
	if d := pr.classes.dominant(); d != "" {
		return fmt.Errorf("%w; %s", err, d)
	}
	return err
}

// validateFirst is how many responses of a point are checked in full
// before time windows sample one in Options.ValidateEvery: a model giving
// wrong outputs is caught at its first responses, not after N.
const validateFirst = 100

// errInterrupted is returned by segment when ctx was cancelled.
var errInterrupted = errors.New("interrupted")

// start begins a session of the point's load from epoch: workers here, or
// the agents' under a coordinator (Deps.Remote).
func (pr *pointRunner) start(ctx context.Context, spec loadSpec, epoch time.Time) loadSession {
	if pr.rs.deps.Remote != nil {
		return pr.startRemote(ctx, spec, epoch)
	}
	return startSession(ctx, pr.pl, spec, epoch)
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
		pr.refused, pr.refusedErrs, pr.refusedClasses = 0, 0, classTally{}
		return nil
	}
	if w.errs > 0 {
		pr.refused++
		pr.refusedErrs += w.errs
		pr.refusedClasses.merge(&w.classes)
		// A starved machine or a few slow timeouts can leave short windows
		// without a success; a server refusing every request fails many.
		if !whole && (pr.refused < stabilityWindow || pr.refusedErrs < minRefused) {
			return nil
		}
		// Messages number windows from 1, as progress does; the result's
		// Window.Index counts from 0.
		msg := fmt.Sprintf("no request succeeded (%d failed in window %d)", w.errs, m.win.Index+1)
		if d := pr.refusedClasses.dominant(); d != "" {
			msg += "; " + d
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

// iterations is perf_analyzer's --request-count: drop the warm-up requests,
// then measure exactly Iterations requests in one window. A trace runs
// here too: its requests once, open loop, each at its time.
func (pr *pointRunner) iterations(ctx context.Context) (bool, error) {
	ld := pr.p.Load
	spec := pr.spec()
	spec.whole = true
	var warm *acc
	var preWarm kinds.Counters
	var haveStats bool
	if ld.WarmupIterations > 0 {
		preWarm, haveStats = pr.snapshot(ctx)
		spec.budget = int64(ld.WarmupIterations)
		var st *aggStats
		var err error
		warm, st, err = pr.start(ctx, spec, pr.rs.epoch()).wait()
		// Warm-up failures still say something about the server.
		pr.errs.merge(&st.errors)
		pr.classes.merge(&st.classes)
		if err != nil {
			return false, failure.Env(pr.withDominant(err))
		}
	}
	if ctx.Err() != nil {
		return true, nil
	}
	var before kinds.Counters
	if warm != nil && haveStats {
		// The warm-up's last requests must be counted before the
		// measured ones start, or they would land in the measurement.
		before, haveStats = pr.settledSnapshot(ctx, preWarm, warm)
	} else {
		before, haveStats = pr.snapshot(ctx)
	}
	spec.budget = int64(max(ld.Iterations, 1))
	procBefore := pr.procRead(ctx, 1)
	epoch := pr.rs.epoch()
	w, st, err := pr.start(ctx, spec, epoch).wait()
	pr.absorb(st)
	if err != nil {
		return false, failure.Env(pr.withDominant(err))
	}
	var server *result.ServerStats
	if haveStats {
		if after, ok := pr.settledSnapshot(ctx, before, w); ok {
			server = serverDelta(before, after)
		}
	}
	if w != nil {
		m := pr.record(w, epoch, server)
		m.proc = procWindow(procBefore, pr.procRead(ctx, 1), server, w.n*int64(max(pr.p.BatchSize, 1)))
		m.met.Process = m.proc
		pr.rs.progress(Event{Kind: WindowDone, Index: pr.idx, Point: pr.p, Window: &m.win, Metrics: &m.met, Stable: true, Start: m.start, End: m.end})
		pr.kept = append(pr.kept, len(pr.windows)-1)
	}
	if ctx.Err() != nil {
		return true, nil
	}
	pr.status = result.PointStable
	if w != nil && w.n == 0 && w.unreachable > 0 && w.unreachable == w.errs {
		return false, failure.Env(fmt.Errorf("%w: none of %d requests succeeded; %s", ErrUnreachable, w.errs, w.classes.dominant()))
	}
	if w != nil {
		return (&unit{rs: pr.rs, prs: []*pointRunner{pr}}).outcome(pr.emptyWindow(w, pr.windows[len(pr.windows)-1], true))
	}
	return false, nil
}

// settleTries and settleFirst bound the wait for a server's statistics to
// count every request of an iterations window: Triton records a request's
// statistics when it releases the request, which can come just after the
// reply reached the client.
const (
	settleTries = 6
	settleFirst = time.Millisecond
)

// settledSnapshot reads the statistics after an iterations window, again
// (a few times, backing off) while they count fewer successful requests
// than the window completed, so the server's breakdown covers exactly the
// measured requests. On a server that counts differently (a batch counted
// once), the last read is used.
func (pr *pointRunner) settledSnapshot(ctx context.Context, before kinds.Counters, w *acc) (kinds.Counters, bool) {
	after, ok := pr.snapshot(ctx)
	if !ok || w == nil {
		return after, ok
	}
	wait := settleFirst
	for try := 0; try < settleTries && after.Success.Count-before.Success.Count < uint64(w.n); try++ {
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			break
		}
		wait *= 2
		next, ok := pr.snapshot(ctx)
		if !ok {
			break
		}
		after = next
	}
	return after, true
}
