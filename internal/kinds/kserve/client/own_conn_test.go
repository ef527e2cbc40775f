package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// deadlineConn records the deadlines set on it.
type deadlineConn struct {
	net.Conn
	mu       sync.Mutex
	deadline time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}

func (c *deadlineConn) interrupted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline.Equal(aLongTimeAgo)
}

// A cancelled call's callback that runs only after the next call, with
// another context, has put a new connection in place must leave that
// connection alone: context.AfterFunc's stop does not wait for a callback
// already started, so this is an ordering the scheduler may produce, and
// the next call would fail with a timeout it never had. The callback of
// the context being watched still interrupts its connection.
func TestCancelWatchLateCallback(t *testing.T) {
	var callbacks []func()
	w := &cancelWatch{afterFunc: func(_ context.Context, f func()) func() bool {
		callbacks = append(callbacks, f)
		// The context is done and f has started in its own goroutine:
		// stop can no longer prevent it.
		return func() bool { return false }
	}}
	defer w.stop()

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	first := &deadlineConn{}
	w.watch(cancelled)
	w.set(first)
	w.set(nil) // the cancelled call dropped its connection and returned

	next := &deadlineConn{}
	ctx, cancelNext := context.WithCancel(context.Background())
	defer cancelNext()
	w.watch(ctx)
	w.set(next)
	callbacks[0]() // the first call's cancellation, late
	if next.interrupted() {
		t.Fatal("a cancellation of an earlier call's context interrupted the next call's connection")
	}
	callbacks[1]() // the watched context's own cancellation
	if !next.interrupted() {
		t.Fatal("the watched context's cancellation did not interrupt its connection")
	}
}
