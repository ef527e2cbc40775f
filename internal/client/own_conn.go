package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// cancelWatch lets the cancellation of a caller's context interrupt a
// blocked read or write on the caller's own connection, by moving the
// connection's deadline into the past. The callback runs on another
// goroutine; the owner replaces the connection only between requests.
type cancelWatch struct {
	watched   context.Context
	stopWatch func() bool
	current   atomic.Pointer[connBox]
}

type connBox struct{ nc net.Conn }

// aLongTimeAgo is a deadline that has passed: it fails blocked I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// watch is registered once per context, since callers keep theirs for a
// whole run.
func (w *cancelWatch) watch(ctx context.Context) {
	if ctx == w.watched {
		return
	}
	w.stop()
	w.watched = ctx
	w.stopWatch = context.AfterFunc(ctx, func() {
		if b := w.current.Load(); b != nil {
			b.nc.SetDeadline(aLongTimeAgo)
		}
	})
}

func (w *cancelWatch) stop() {
	if w.stopWatch != nil {
		w.stopWatch()
		w.stopWatch, w.watched = nil, nil
	}
}

// set names the connection a cancellation interrupts (nil: none).
func (w *cancelWatch) set(nc net.Conn) {
	if nc == nil {
		w.current.Store(nil)
		return
	}
	w.current.Store(&connBox{nc})
}

// dialOwn connects to host (host:port) by TCP, or with dial (Options.Dial)
// when set, and then by TLS when cfg is set, with the server name taken
// from host unless cfg names one. A non-empty alpn is offered and
// required: gRPC servers speak HTTP/2 only when TLS negotiated it.
func dialOwn(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), host string, deadline time.Time, cfg *tls.Config, alpn string) (net.Conn, error) {
	var nc net.Conn
	var err error
	if dial != nil {
		nc, err = dial(ctx, "tcp", host)
	} else {
		d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Deadline: deadline}
		nc, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nc, nil
	}
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		name, _, err := net.SplitHostPort(host)
		if err != nil {
			name = host
		}
		cfg.ServerName = name
	}
	nc.SetDeadline(deadline) // the handshake too; the caller sets its own after
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	if alpn != "" {
		if got := tc.ConnectionState().NegotiatedProtocol; got != alpn {
			tc.Close()
			return nil, fmt.Errorf("tls: server negotiated protocol %q, want %q", got, alpn)
		}
	}
	return tc, nil
}
