package engine

import "sync"

// batchSize is how many samples a worker collects before handing them to
// the aggregator. One channel send per request wakes the aggregator's
// goroutine (and often an idle OS thread to run it) on every request, which
// at concurrency 1 costs more CPU than the request's own bookkeeping.
const batchSize = 64

// outbox holds one worker's samples not yet handed to the aggregator. The
// worker appends; a full outbox goes to the aggregator as one batch, and the
// aggregator takes whatever is pending itself before it cuts a window, so a
// window never waits for a slow worker to fill its batch.
type outbox struct {
	mu  sync.Mutex
	buf []sample
}

// mailroom connects a session's outboxes to its aggregator: full batches
// travel on out, partly filled ones are collected through the registry.
type mailroom struct {
	out  chan []sample
	free chan []sample // recorded batches, reused by the workers

	mu    sync.Mutex
	boxes []*outbox
}

func newMailroom() *mailroom {
	return &mailroom{out: make(chan []sample, resultsBuffer/batchSize), free: make(chan []sample, resultsBuffer/batchSize)}
}

// open registers a worker's outbox.
func (m *mailroom) open() *outbox {
	o := &outbox{buf: m.batch()}
	m.mu.Lock()
	m.boxes = append(m.boxes, o)
	m.mu.Unlock()
	return o
}

func (m *mailroom) batch() []sample {
	select {
	case b := <-m.free:
		return b
	default:
		return make([]sample, 0, batchSize)
	}
}

// recycle returns a recorded batch for reuse; the aggregator calls it.
func (m *mailroom) recycle(b []sample) {
	clear(b) // drop error values and mismatch strings
	select {
	case m.free <- b[:0]:
	default:
	}
}

// post adds one sample; a full outbox is sent as a batch. The send happens
// outside the lock so the aggregator can still collect while this worker
// waits on a full channel.
func (m *mailroom) post(o *outbox, s *sample) {
	o.mu.Lock()
	o.buf = append(o.buf, *s)
	if len(o.buf) < batchSize {
		o.mu.Unlock()
		return
	}
	full := o.buf
	o.buf = m.batch()
	o.mu.Unlock()
	m.out <- full
}

// flush sends what o holds; a worker calls it once, when it exits.
func (m *mailroom) flush(o *outbox) {
	o.mu.Lock()
	rest := o.buf
	o.buf = nil
	o.mu.Unlock()
	if len(rest) > 0 {
		m.out <- rest
	}
}

// collect hands every pending sample of every outbox to record; the
// aggregator calls it before it cuts a window.
func (m *mailroom) collect(record func(*sample)) {
	m.mu.Lock()
	boxes := m.boxes
	m.mu.Unlock()
	for _, o := range boxes {
		o.mu.Lock()
		pending := o.buf
		if len(pending) > 0 {
			o.buf = m.batch()
		}
		o.mu.Unlock()
		if len(pending) == 0 {
			continue
		}
		for i := range pending {
			record(&pending[i])
		}
		m.recycle(pending)
	}
}
