package refserver

import "sync"

// streamOrder releases a stream's responses in the order their requests
// were received, as Triton's stream handler does for non-decoupled models,
// while the requests themselves still run concurrently (so dynamic batching
// sees them together). Whoever completes the oldest outstanding request
// sends it and every later one already done.
type streamOrder[T any] struct {
	mu    sync.Mutex
	next  uint64 // receive index of the oldest response not yet released
	taken uint64 // receive indexes handed out so far
	ready map[uint64]*T
	send  func(*T)
}

func newStreamOrder[T any](send func(*T)) *streamOrder[T] {
	return &streamOrder[T]{ready: map[uint64]*T{}, send: send}
}

// reserve gives the next request its place in the response order; only the
// receive loop calls it, so places follow receive order.
func (o *streamOrder[T]) reserve() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.taken
	o.taken++
	return n
}

// done files the response for place n; nil means the request answers
// nothing but must not hold back those behind it. Sending happens under
// the lock so two completers cannot interleave out of order.
func (o *streamOrder[T]) done(n uint64, m *T) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ready[n] = m
	for {
		m, ok := o.ready[o.next]
		if !ok {
			return
		}
		delete(o.ready, o.next)
		o.next++
		if m != nil {
			o.send(m)
		}
	}
}
