package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/transport"
)

// maxDistinct caps the distinct error and mismatch messages kept per point.
const maxDistinct = 5

// tally counts messages, remembering the first few distinct ones in order.
type tally struct {
	order  []string
	counts map[string]int64
	total  int64
}

func (t *tally) add(msg string) {
	t.total++
	if t.counts == nil {
		t.counts = map[string]int64{}
	}
	if _, ok := t.counts[msg]; ok {
		t.counts[msg]++
		return
	}
	if len(t.order) < maxDistinct {
		t.order = append(t.order, msg)
		t.counts[msg] = 1
	}
}

func (t *tally) merge(o *tally) {
	if t.counts == nil {
		t.counts = map[string]int64{}
	}
	for _, m := range o.order {
		if _, ok := t.counts[m]; ok {
			t.counts[m] += o.counts[m]
		} else if len(t.order) < maxDistinct {
			t.order = append(t.order, m)
			t.counts[m] = o.counts[m]
		}
	}
	t.total += o.total
}

// first renders the kept messages with their counts.
func (t *tally) first() []string {
	out := make([]string, 0, len(t.order))
	for _, m := range t.order {
		if n := t.counts[m]; n > 1 {
			out = append(out, fmt.Sprintf("%s (×%d)", m, n))
		} else {
			out = append(out, m)
		}
	}
	return out
}

// aggStats is what the aggregator learned beyond the windows; it is read
// only after the aggregator has exited.
type aggStats struct {
	errors     tally
	classes    classTally
	mismatches tally
	checked    int64
	late       int64
	dropped    int64
	// unreachable counts transport failures in the current (unfinished)
	// window; closed windows carry their own count.
}

// aggregator is the single owner of a session's measurement state: it reads
// the workers' batches of samples, cuts windows and hands closed ones to the
// controller. whole mode (iterations) keeps one window spanning first send to
// last completion, closed when the workers are done.
type aggregator struct {
	in <-chan []sample
	// pending, when set, hands over samples the workers hold in batches
	// not yet full; called before every cut. recycle, when set, takes each
	// batch back once recorded.
	pending  func(record func(*sample))
	recycle  func([]sample)
	out      chan *acc
	stopping <-chan struct{}
	done     chan struct{}
	clock    func() time.Duration
	grace    time.Duration

	c     *cutter
	whole bool
	stats aggStats
}

func (a *aggregator) record(s *sample) {
	if s.Err != nil {
		a.stats.errors.add(s.Err.Error())
		a.stats.classes.add(s.Err)
	}
	if s.Checked {
		a.stats.checked++
		if s.Mismatch != "" {
			a.stats.mismatches.add(s.Mismatch)
		}
	}
	if a.whole {
		c := a.c.cur
		if c.n+c.errs == 0 || s.sched < c.start {
			c.start = s.sched
		}
		c.end = max(c.end, s.Done)
		c.add(s)
		if errors.Is(s.Err, transport.ErrUnavailable) {
			c.unreachable++
		}
		if s.late() {
			a.stats.late++
		}
		return
	}
	before := a.c.dropped
	a.c.add(s)
	if a.c.dropped == before && errors.Is(s.Err, transport.ErrUnavailable) {
		if s.Done >= a.c.boundary {
			a.c.next.unreachable++
		} else {
			a.c.cur.unreachable++
		}
	}
}

func (a *aggregator) emit(w *acc) bool {
	select {
	case a.out <- w:
		return true
	case <-a.stopping:
		return false
	}
}

func (a *aggregator) run() {
	defer close(a.done)
	defer close(a.out)
	if a.whole {
		for b := range a.in {
			a.recordBatch(b)
		}
		a.emit(a.c.cur)
		return
	}
	timer := time.NewTimer(a.c.due() + a.grace - a.clock())
	defer timer.Stop()
	for {
		select {
		case b, ok := <-a.in:
			if !ok {
				a.finish()
				return
			}
			a.recordBatch(b)
		case <-timer.C:
			// Samples already handed over or waiting in a worker's batch
			// completed before now; take them before cutting so they land
			// in their own window.
			for n := len(a.in); n > 0; n-- {
				b, ok := <-a.in
				if !ok {
					break
				}
				a.recordBatch(b)
			}
			if a.pending != nil {
				a.pending(a.record)
			}
			if w := a.c.tick(); w != nil && !a.emit(w) {
				a.drain()
				return
			}
			timer.Reset(a.c.due() + a.grace - a.clock())
		}
	}
}

func (a *aggregator) recordBatch(b []sample) {
	for i := range b {
		a.record(&b[i])
	}
	if a.recycle != nil {
		a.recycle(b)
	}
}

// drain consumes the rest of the samples after a stop so workers never
// block on a full channel.
func (a *aggregator) drain() {
	for b := range a.in {
		a.recordBatch(b)
	}
	a.finish()
}

func (a *aggregator) finish() {
	a.stats.late += a.c.late
	a.stats.dropped += a.c.dropped
	a.c.late, a.c.dropped = 0, 0
}
