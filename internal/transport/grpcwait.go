package transport

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/stats"
)

// A call's wait on the grpc-go path means what it means on perfscen's own
// HTTP/2 connection (GRPCReply.Wait): from the request message handed to
// the transport to the reply's first HEADERS frame. The call measured
// whole, less the codec's time, also counted the reply's body and the
// library's own scheduling, so client_wait changed meaning with the path
// a scenario took (max_connections > 0, non-ASCII metadata).
//
// WithCallWait marks ctx for one call; after the call, CallWait reads the
// wait the stats handler GRPCDial installs saw on it.

type callWaitKey struct{}

// callWait holds one call's moments, in nanoseconds of the monotonic
// clock since start (0: not seen).
type callWait struct {
	start         time.Time
	sent, headers atomic.Int64
}

// WithCallWait returns ctx carrying a record of the call's wait.
func WithCallWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, callWaitKey{}, &callWait{start: time.Now()})
}

// CallWait is the wait of the call made with ctx (WithCallWait): false
// when the handler saw no request sent or no reply headers (the call
// failed before them).
func CallWait(ctx context.Context) (time.Duration, bool) {
	w, _ := ctx.Value(callWaitKey{}).(*callWait)
	if w == nil {
		return 0, false
	}
	sent, headers := w.sent.Load(), w.headers.Load()
	if sent == 0 || headers == 0 {
		return 0, false
	}
	return max(time.Duration(headers-sent), 0), true
}

// waitStats is the stats handler that records the two moments.
type waitStats struct{}

func (waitStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (waitStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (waitStats) HandleConn(context.Context, stats.ConnStats) {}

func (waitStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	w, _ := ctx.Value(callWaitKey{}).(*callWait)
	if w == nil {
		return
	}
	switch s.(type) {
	case *stats.OutPayload:
		// The last request message handed to the transport: the wait
		// starts when the request is out.
		w.sent.Store(int64(time.Since(w.start)) + 1)
	case *stats.InHeader:
		w.headers.CompareAndSwap(0, int64(time.Since(w.start))+1)
	}
}
