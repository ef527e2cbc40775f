package engine

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// cutGrace lets samples completed just before a boundary reach the
	// aggregator before it cuts.
	cutGrace = 5 * time.Millisecond
	// growCap bounds an auto-grown request-rate pool.
	growCap = 4096
	// resultsBuffer is how many samples the results channel holds, in
	// batches of batchSize.
	resultsBuffer = 4096
)

// loadSpec says how one session drives load.
type loadSpec struct {
	rate       bool
	workers    int // concurrency, or the initial request-rate pool
	maxWorkers int // request rate: pool cap (grow on demand up to it)
	pacer      Pacer
	budget     int64 // total requests; 0 = until stopped
	cut        cutter
	whole      bool // one window over the whole session (iterations)
	// precise waits for each send by a coarse timer, then a fine sleep
	// and a spin in the worker (coarseMargin), instead of the timer
	// alone.
	precise bool
	drain   time.Duration
	// cursorBase and cursorTotal place this session's workers among all
	// the workers of a load shared by several agents: worker i walks the
	// input data as worker cursorBase+i of cursorTotal, so the agents'
	// workers together walk it as one process's would. Zero: this
	// session's workers are all.
	cursorBase, cursorTotal int
}

// cursor is where worker id of workers walks the input data.
func (s loadSpec) cursor(id, workers int) (int, int) {
	if s.cursorTotal <= 0 {
		return id, workers
	}
	return s.cursorBase + id, s.cursorTotal
}

// loadSession is one stretch of load on a point: its closed windows (out),
// and how it ends. A local session's workers run here; a coordinator's
// sessions run on its agents (remote.go).
type loadSession interface {
	// out yields closed windows; it is closed when the session ends.
	out() <-chan *acc
	// requestStop asks for the end without waiting for it.
	requestStop(drain time.Duration)
	// stop ends the session and returns its totals.
	stop(drain time.Duration) (*aggStats, error)
	// wait is for budgeted sessions: the last window once every request
	// completed.
	wait() (*acc, *aggStats, error)
}

// session is one stretch of load on a point with its aggregator. Workers
// report samples by value, in batches (mailroom); the aggregator alone owns
// the measurement state; the controller reads closed windows and calls stop.
type session struct {
	epoch   time.Time
	clock   func() time.Duration
	windows <-chan *acc

	stopCh      chan struct{}
	stopOnce    sync.Once
	drainCtx    context.Context
	drainCancel context.CancelFunc
	wg          sync.WaitGroup
	mail        *mailroom
	agg         *aggregator
	budget      atomic.Int64

	errOnce  sync.Once
	setupErr error // a worker's setup failure, or the server gone (see gone)

	answered atomic.Int64 // clock of the latest reply of any kind
}

// startSession starts the workers of one session; epoch is the session
// clock's zero, shared by the sessions of a unit so their windows are cut
// on the same boundaries.
func startSession(ctx context.Context, pl *pointLoad, spec loadSpec, epoch time.Time) *session {
	s := &session{epoch: epoch, stopCh: make(chan struct{}), mail: newMailroom()}
	s.clock = func() time.Duration { return time.Since(s.epoch) }
	// In-flight requests outlive the caller's cancellation by the drain
	// deadline (interruptDrain at most), so a request about to answer
	// still completes.
	s.drainCtx, s.drainCancel = context.WithCancel(context.WithoutCancel(ctx))
	s.budget.Store(spec.budget)
	out := make(chan *acc, 16)
	s.windows = out
	s.agg = &aggregator{in: s.mail.out, pending: s.mail.collect, recycle: s.mail.recycle,
		out: out, stopping: s.stopCh, done: make(chan struct{}),
		clock: s.clock, grace: cutGrace, c: newCutter(spec.cut), whole: spec.whole}
	go s.agg.run()

	if spec.rate {
		ticks := make(chan tick)
		s.wg.Add(1)
		go s.dispatch(pl, spec, ticks)
	} else {
		for i := 0; i < max(spec.workers, 1); i++ {
			if i > 0 && ctx.Err() != nil {
				// Interrupted while the workers start: the rest would
				// only be made to be stopped.
				break
			}
			s.wg.Add(1)
			c, n := spec.cursor(i, max(spec.workers, 1))
			go s.closedLoop(pl, i, c, n, spec.budget > 0)
		}
	}
	go func() {
		s.wg.Wait()
		close(s.mail.out)
	}()
	// Stop promptly when the caller is cancelled.
	go func() {
		select {
		case <-ctx.Done():
			s.requestStop(min(spec.drain, interruptDrain))
		case <-s.agg.done:
		}
	}()
	return s
}

func (s *session) out() <-chan *acc { return s.windows }

func (s *session) fail(err error) {
	s.errOnce.Do(func() { s.setupErr = err })
	s.requestStop(0)
}

func (s *session) report(o *outbox, smp *sample) {
	if smp.Err != nil && s.drainCtx.Err() != nil && errors.Is(smp.Err, context.Canceled) {
		return // abandoned by the drain deadline, not a server failure
	}
	s.mail.post(o, smp)
}

func (s *session) stopped() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

func (s *session) closedLoop(pl *pointLoad, id, cursor, cursors int, budgeted bool) {
	defer s.wg.Done()
	if s.stopped() {
		return // stopped before this worker started: nothing to make
	}
	w, err := pl.newWorker(s.drainCtx, id, cursor, cursors)
	if err != nil {
		s.fail(err)
		return
	}
	w.epoch = s.epoch
	defer w.close()
	o := s.mail.open()
	defer s.mail.flush(o)
	var f failures
	for !s.stopped() {
		if budgeted && s.budget.Add(-1) < 0 {
			return
		}
		if d := f.backoff(); d > 0 && !s.pause(d) {
			return
		}
		var smp sample
		w.do(s.drainCtx, &smp, s.clock)
		smp.sched = smp.Sent
		s.report(o, &smp)
		s.judge(&f, &smp)
	}
}

// tick is one scheduled send handed to an open-loop worker.
type tick struct {
	n   uint64 // the send's number in the schedule, from 0
	due time.Duration
	// queued says no worker was free at due and none could be added: the
	// send waits for one (perf_analyzer's delayed request).
	queued bool
}

func (s *session) dispatch(pl *pointLoad, spec loadSpec, ticks chan tick) {
	defer s.wg.Done()
	defer close(ticks)
	workers := 0
	limit := spec.maxWorkers
	if limit <= 0 {
		limit = growCap
	}
	spawn := func() {
		s.wg.Add(1)
		go s.openLoop(pl, spec, workers, max(spec.workers, 1), ticks)
		workers++
	}
	if spec.precise {
		threadSlices.acquire() // see slice.go
		defer threadSlices.release()
	}
	for workers < min(max(spec.workers, 1), limit) {
		spawn()
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for n := uint64(0); ; n++ {
		if spec.budget > 0 && n >= uint64(spec.budget) {
			return
		}
		wait, stop := spec.pacer.Pace(s.clock(), n)
		if stop {
			return
		}
		due := spec.pacer.Due(n)
		if spec.precise {
			if !s.waitUntil(timer, due-spec.handoff()) {
				return
			}
		} else if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-s.stopCh:
				return
			}
		}
		select {
		case ticks <- tick{n: n, due: due}:
			continue
		default:
		}
		queued := workers >= limit
		if !queued {
			spawn()
		}
		select {
		case ticks <- tick{n: n, due: due, queued: queued}:
		case <-s.stopCh:
			return
		}
	}
}

// A precise send is waited for in two parts. The dispatcher waits on a
// Go timer until coarseMargin before the send and hands the tick to a
// worker then; the worker sleeps on the kernel's high-resolution timer
// until spinMargin before it, then spins, and sends. Workers run on
// real-time threads where permitted (realtime.go), else the process's
// threads run on a short time slice meanwhile (slice.go).
//
// A Go timer alone wakes up to a millisecond late when the process is
// otherwise idle (the runtime then waits in epoll with a whole-millisecond
// timeout; internal/refserver's wakeup.go measured it), which is the whole
// error budget of a replayed trace. A spin over that millisecond fixes the
// idle case but not a busy one: beside a server that keeps both CPUs busy
// (an LLM engine on the load host), a thread that spins a whole
// millisecond uses up its time slice and is preempted just before the
// send, for another thread's slice. A sleep leaves the thread its slice (a
// woken thread on a short slice, or a real-time one, is let in first).
//
// The hand-off is early because the dispatcher is an ordinary goroutine
// on an ordinary thread: on a busy machine it runs late. Beside Ollama
// and builds at load 5, ticks handed over 4 ms ahead reached their
// real-time worker up to 37 ms after the send's instant (the replay's p99
// 0.3–26 ms); 20 ms ahead, up to 14 ms after; 50 ms ahead, p99 under 1 ms
// in 9 of 12 runs (docs/llm.md). A worker holds its tick that long, so a
// replay at rate r keeps about r × coarseMargin more workers (at 200
// requests/s, ten).
const (
	coarseMargin = 50 * time.Millisecond
	// boundedMargin is the hand-off of a fixed pool (loadSpec.handoff):
	// enough for the dispatcher's timer on an idle machine.
	boundedMargin = 4 * time.Millisecond
	// nanosleep may end up to the thread's timer slack (50 µs by
	// default) late, so the spin starts well before that.
	spinMargin = 120 * time.Microsecond
	// sleepChunk bounds one sleep, so that a stopped session's worker
	// notices within it.
	sleepChunk = 10 * time.Millisecond
)

// handoff is how long before a precise send its tick goes to a worker:
// coarseMargin where the pool grows on demand; with a fixed pool
// (max_threads, sequences) each held tick is a worker not free to send,
// so there the margin is boundedMargin.
func (spec loadSpec) handoff() time.Duration {
	if spec.maxWorkers > 0 {
		return boundedMargin
	}
	return coarseMargin
}

// waitUntil waits on timer until the session clock reaches at; false when
// the session stopped meanwhile.
func (s *session) waitUntil(timer *time.Timer, at time.Duration) bool {
	threadSlices.refresh()
	for {
		left := at - s.clock()
		if left <= 0 {
			return true
		}
		timer.Reset(left)
		select {
		case <-timer.C:
		case <-s.stopCh:
			return false
		}
	}
}

// sendAt waits for a precise send's instant, at most coarseMargin ahead
// (see coarseMargin): asleep, then spinning for the last spinMargin. It
// returns early when the session stops. A real-time worker spins without
// yielding: its goroutine is locked to its thread, where a yield means
// handing the thread to another and back.
func (s *session) sendAt(due time.Duration, wait waitKind) {
	for !s.stopped() {
		left := due - s.clock()
		if left <= 0 {
			return
		}
		if left > spinMargin {
			fineSleep(min(left-spinMargin, sleepChunk))
			continue
		}
		if wait != waitRealtime {
			runtime.Gosched()
		}
	}
}

// fineSleep blocks the calling thread for d on the kernel's
// high-resolution timer. It is only ever asked for up to sleepChunk, so
// it needs no way to be cut short.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// openLoop serves scheduled sends; latency counts from the schedule.
func (s *session) openLoop(pl *pointLoad, spec loadSpec, id, workers int, ticks <-chan tick) {
	defer s.wg.Done()
	// Cursors stride over the nominal pool; grown workers share a stride
	// position, which only repeats inputs in a different order.
	c, n := spec.cursor(id%workers, workers)
	w, err := pl.newWorker(s.drainCtx, id, c, n)
	if err != nil {
		s.fail(err)
		for range ticks {
		}
		return
	}
	w.epoch = s.epoch
	defer w.close()
	o := s.mail.open()
	defer s.mail.flush(o)
	var wait waitKind
	if spec.precise {
		var done func()
		wait, done = replayWait() // see realtime.go
		defer done()
	}
	var f failures
	for t := range ticks {
		if s.stopped() {
			continue
		}
		if spec.precise {
			s.sendAt(t.due, wait)
			if s.stopped() {
				continue // stopped while the send waited for its instant
			}
		}
		smp := sample{sched: t.due, queued: t.queued, paced: true, tick: t.n, wait: wait}
		w.do(s.drainCtx, &smp, s.clock)
		s.report(o, &smp)
		s.judge(&f, &smp) // no backoff: the schedule bounds the attempts
	}
}

// interruptDrain caps the drain after an interrupt: the point is
// reported interrupted and never judged, so its in-flight requests are
// not worth waiting for, and a user who pressed ^C expects the run to
// end within a second at any concurrency.
const interruptDrain = 100 * time.Millisecond

func (s *session) requestStop(drain time.Duration) {
	s.stopOnce.Do(func() {
		close(s.stopCh)
		if drain <= 0 {
			drain = time.Second
		}
		time.AfterFunc(drain, s.drainCancel)
	})
}

// stop ends the session: no new sends, in-flight requests get the drain
// deadline, then every goroutine is gone. It returns the aggregator's
// totals and any worker setup failure.
func (s *session) stop(drain time.Duration) (*aggStats, error) {
	s.requestStop(drain)
	for range s.windows {
	}
	<-s.agg.done
	s.drainCancel()
	return &s.agg.stats, s.setupErr
}

// wait is for budgeted sessions: it returns once every request completed.
func (s *session) wait() (*acc, *aggStats, error) {
	var last *acc
	for w := range s.windows {
		last = w
	}
	<-s.agg.done
	s.drainCancel()
	return last, &s.agg.stats, s.setupErr
}
