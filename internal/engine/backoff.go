package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/perfscen/perfscen/internal/transport"
)

// Bounded failure. A server that goes away makes every request fail at
// once, and a closed loop of instant failures would send hundreds of
// thousands of them a second until the window ends (and one more window,
// since the window the server died in had successes). So:
//
//   - after a transport failure (errors.Is(err, transport.ErrUnavailable):
//     refused, reset, timed out) a concurrency-mode worker waits before
//     its next request, 5 ms after the first failure in a row, doubling
//     up to 250 ms: at most 10 failed attempts in any second per worker
//     (9 in the first second of a run of failures, 4 a second after).
//     Any reply (a success or an error the server sent) ends the run of
//     failures. Request-rate workers do not wait: the schedule bounds
//     their attempts.
//   - when a worker has seen nothing but transport failures for goneAfter
//     and no reply of any kind came in that time, the session ends and
//     the point is "could not measure" (exit 3): within goneAfter plus one
//     backoff (5.25 s) of the server's last reply when requests fail at
//     once, plus one request timeout when they time out instead.
const (
	backoffFirst = 5 * time.Millisecond
	backoffCap   = 250 * time.Millisecond
	goneAfter    = 5 * time.Second
)

// failures is one worker's current run of transport failures.
type failures struct {
	n     int           // transport failures in a row
	since time.Duration // when the first of them was sent
}

// backoff is how long to wait before the next request.
func (f *failures) backoff() time.Duration {
	if f.n == 0 {
		return 0
	}
	return min(backoffFirst<<min(f.n-1, 10), backoffCap)
}

// pause waits d, or until the session stops; false when it stopped.
func (s *session) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stopCh:
		return false
	}
}

// judge updates a worker's run of failures with its last request, and
// ends the session when the server is gone.
func (s *session) judge(f *failures, smp *sample) {
	if smp.Err == nil || !errors.Is(smp.Err, transport.ErrUnavailable) {
		f.n = 0
		if smp.Done > time.Duration(s.answered.Load()) {
			s.answered.Store(int64(smp.Done))
		}
		return
	}
	if s.drainCtx.Err() != nil {
		return // abandoned at the drain deadline
	}
	if f.n == 0 {
		f.since = smp.Sent
	}
	f.n++
	now := smp.Done
	last := time.Duration(s.answered.Load())
	if now-f.since >= goneAfter && now-last >= goneAfter {
		s.fail(fmt.Errorf("%w: no reply for %v (%d transport failures in a row on one worker, backing off up to %v)",
			ErrUnreachable, (now - last).Round(time.Millisecond), f.n, backoffCap))
	}
}
