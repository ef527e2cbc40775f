package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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
	drain      time.Duration
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

func startSession(ctx context.Context, pl *pointLoad, spec loadSpec) *session {
	s := &session{epoch: time.Now(), stopCh: make(chan struct{}), mail: newMailroom()}
	s.clock = func() time.Duration { return time.Since(s.epoch) }
	// In-flight requests outlive the caller's cancellation by the drain
	// deadline, so an interrupt still lets them complete.
	s.drainCtx, s.drainCancel = context.WithCancel(context.WithoutCancel(ctx))
	s.budget.Store(spec.budget)
	out := make(chan *acc, 16)
	s.windows = out
	s.agg = &aggregator{in: s.mail.out, pending: s.mail.collect, recycle: s.mail.recycle,
		out: out, stopping: s.stopCh, done: make(chan struct{}),
		clock: s.clock, grace: cutGrace, c: newCutter(spec.cut), whole: spec.whole}
	go s.agg.run()

	if spec.rate {
		ticks := make(chan time.Duration)
		s.wg.Add(1)
		go s.dispatch(pl, spec, ticks)
	} else {
		for i := 0; i < max(spec.workers, 1); i++ {
			s.wg.Add(1)
			go s.closedLoop(pl, i, max(spec.workers, 1), spec.budget > 0)
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
			s.requestStop(spec.drain)
		case <-s.agg.done:
		}
	}()
	return s
}

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

func (s *session) closedLoop(pl *pointLoad, id, workers int, budgeted bool) {
	defer s.wg.Done()
	w, err := pl.newWorker(s.drainCtx, id, workers)
	if err != nil {
		s.fail(err)
		return
	}
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

func (s *session) dispatch(pl *pointLoad, spec loadSpec, ticks chan time.Duration) {
	defer s.wg.Done()
	defer close(ticks)
	workers := 0
	limit := spec.maxWorkers
	if limit <= 0 {
		limit = growCap
	}
	spawn := func() {
		s.wg.Add(1)
		go s.openLoop(pl, workers, max(spec.workers, 1), ticks)
		workers++
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
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-s.stopCh:
				return
			}
		}
		due := spec.pacer.Due(n)
		select {
		case ticks <- due:
			continue
		default:
		}
		if workers < limit {
			spawn()
		}
		select {
		case ticks <- due:
		case <-s.stopCh:
			return
		}
	}
}

// openLoop serves scheduled sends; latency counts from the schedule.
func (s *session) openLoop(pl *pointLoad, id, workers int, ticks <-chan time.Duration) {
	defer s.wg.Done()
	// Cursors stride over the nominal pool; grown workers share a stride
	// position, which only repeats inputs in a different order.
	w, err := pl.newWorker(s.drainCtx, id, workers)
	if err != nil {
		s.fail(err)
		for range ticks {
		}
		return
	}
	w.cursor = pl.data.Cursor(id%workers, workers)
	defer w.close()
	o := s.mail.open()
	defer s.mail.flush(o)
	var f failures
	for due := range ticks {
		if s.stopped() {
			continue
		}
		smp := sample{sched: due}
		w.do(s.drainCtx, &smp, s.clock)
		s.report(o, &smp)
		s.judge(&f, &smp) // no backoff: the schedule bounds the attempts
	}
}

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
