package refserver

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/tap"
)

// Triton's sequence batcher takes a sequence's requests in the order they
// reach it: a request without START for a sequence it does not know is
// refused ("must specify the START flag"). Its gRPC front end hands the
// ModelInfer calls of a connection to the server in the order they
// arrived on it, two completion-queue threads taking them in turn.
// grpc-go runs every call in a goroutine of its own instead, so two calls
// sent back to back on one connection reach the model in either order.
// perf_analyzer sends such a pair when it ends its open sequences at exit:
// the END of a sequence whose START is still in flight. Triton took the
// START first; this server, without the arrivals below, now and then took
// the END first and refused it.
//
// arrivals restores the order for the calls that need it: each ModelInfer
// call gets a ticket as its headers are read (the transport's reader does
// that in arrival order), a call of a sequence waits until every call that
// arrived before it on its connection has either reached its model's queue
// or turned out not to be a sequence's, and each call passes its ticket as
// soon as it has. Calls outside sequences never wait.
type arrivals struct {
	mu      sync.Mutex
	next    uint64          // the ticket the next call gets
	low     uint64          // every ticket below low has passed
	passed  map[uint64]bool // tickets at or above low that have passed
	changed chan struct{}   // closed and replaced when low moves
}

func newArrivals() *arrivals {
	return &arrivals{passed: map[uint64]bool{}, changed: make(chan struct{})}
}

// ticket is one call's place on its connection; the zero ticket (no
// arrivals: a call of a server without the options below) never waits.
type ticket struct {
	a *arrivals
	n uint64
}

func (a *arrivals) take() ticket {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := ticket{a, a.next}
	a.next++
	return t
}

// pass marks the ticket as no longer ahead of anyone; again is harmless.
func (t ticket) pass() {
	a := t.a
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.n < a.low || a.passed[t.n] {
		return
	}
	a.passed[t.n] = true
	moved := false
	for a.passed[a.low] {
		delete(a.passed, a.low)
		a.low++
		moved = true
	}
	if moved {
		close(a.changed)
		a.changed = make(chan struct{})
	}
}

// wait returns once every call that arrived before t has passed, or with
// ctx's error.
func (t ticket) wait(ctx context.Context) error {
	a := t.a
	if a == nil {
		return nil
	}
	for {
		a.mu.Lock()
		ahead, ch := a.low < t.n, a.changed
		a.mu.Unlock()
		if !ahead {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type arrivalsKey struct{}
type ticketKey struct{}

func ticketFrom(ctx context.Context) ticket {
	t, _ := ctx.Value(ticketKey{}).(ticket)
	return t
}

const modelInferMethod = "/inference.GRPCInferenceService/ModelInfer"

// arrivalOptions are the gRPC server options that hand out the tickets:
// a stats handler gives each connection its arrivals and passes every
// call's ticket when the call ends, whatever happened to it (a message
// that did not decode never reaches the service); the tap hands a ticket
// to each ModelInfer call as its headers arrive.
func arrivalOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.StatsHandler(arrivalStats{}), grpc.InTapHandle(tapArrival)}
}

func tapArrival(ctx context.Context, info *tap.Info) (context.Context, error) {
	a, _ := ctx.Value(arrivalsKey{}).(*arrivals)
	if a == nil || info.FullMethodName != modelInferMethod {
		return ctx, nil
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// grpc-go ends a call past its deadline right after the tap,
		// before any handler: it must hold no ticket.
		return ctx, nil
	}
	return context.WithValue(ctx, ticketKey{}, a.take()), nil
}

type arrivalStats struct{}

func (arrivalStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, arrivalsKey{}, newArrivals())
}

func (arrivalStats) HandleConn(context.Context, stats.ConnStats) {}

func (arrivalStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (arrivalStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, end := s.(*stats.End); end {
		ticketFrom(ctx).pass()
	}
}
