package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"
)

// ownConn is the state both protocols' connections of a caller's own
// share: the socket, its buffered reader, whether it has carried a whole
// exchange, and the watch that lets a cancelled context interrupt it.
type ownConn struct {
	nc     net.Conn
	br     *bufio.Reader
	reused bool // nc has carried a complete exchange

	cancelWatch
}

// attach makes nc the connection, reading through a buffer of size bytes
// (kept across connections).
func (o *ownConn) attach(nc net.Conn, size int) {
	o.nc, o.reused = nc, false
	o.cancelWatch.set(nc)
	if o.br == nil {
		o.br = bufio.NewReaderSize(nc, size)
	} else {
		o.br.Reset(nc)
	}
}

// dropDead drops a connection that can no longer carry a request though
// nothing failed on it: a blocking connection that a cancellation, arriving
// between two calls, shut down, under TLS or not. A poller connection is
// revived by the next call's deadline instead.
func (o *ownConn) dropDead() {
	nc := o.nc
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	if d, ok := nc.(interface{ isShut() bool }); ok && d.isShut() {
		o.drop()
	}
}

// drop closes the connection, if any; the next request dials anew.
func (o *ownConn) drop() error {
	if o.nc == nil {
		return nil
	}
	err := o.nc.Close()
	o.nc, o.reused = nil, false
	o.cancelWatch.set(nil)
	return err
}

// Close ends the cancellation watch and the connection.
func (o *ownConn) Close() error {
	o.cancelWatch.stop()
	return o.drop()
}

// cancelWatch lets the cancellation of a caller's context interrupt a
// blocked read or write on the caller's own connection, by moving the
// connection's deadline into the past. The callback runs on another
// goroutine; the owner replaces the connection only between requests.
//
// context.AfterFunc's stop does not wait for a callback that has already
// started, so a cancellation can reach the callback after its call has
// ended and the next call, with another context, has dialled a new
// connection. Each context's callback therefore carries the generation it
// was registered in, and acts only while that generation is current: a
// late callback of an earlier context leaves the new connection alone.
type cancelWatch struct {
	watched   context.Context
	stopWatch func() bool
	// afterFunc is context.AfterFunc; tests run the callback when they
	// choose.
	afterFunc func(context.Context, func()) func() bool

	mu  sync.Mutex
	nc  net.Conn // the connection a cancellation interrupts; nil: none
	gen uint64   // bumped by stop
}

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
	w.mu.Lock()
	gen := w.gen
	w.mu.Unlock()
	after := w.afterFunc
	if after == nil {
		after = context.AfterFunc
	}
	w.stopWatch = after(ctx, func() { w.interrupt(gen) })
}

// interrupt fails the blocked I/O of the current connection, if the
// context of generation gen is still the one watched.
func (w *cancelWatch) interrupt(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gen == gen && w.nc != nil {
		w.nc.SetDeadline(aLongTimeAgo)
	}
}

func (w *cancelWatch) stop() {
	if w.stopWatch != nil {
		w.stopWatch()
		w.stopWatch, w.watched = nil, nil
		w.mu.Lock()
		w.gen++
		w.mu.Unlock()
	}
}

// set names the connection a cancellation interrupts (nil: none).
func (w *cancelWatch) set(nc net.Conn) {
	w.mu.Lock()
	w.nc = nc
	w.mu.Unlock()
}

// dialOwn connects to host (host:port) by TCP, or with dial (Options.Dial)
// when set, and then by TLS when cfg is set, with the server name taken
// from host unless cfg names one. A non-empty alpn is offered and
// required: gRPC servers speak HTTP/2 only when TLS negotiated it. A
// blocking TCP connection's reads poll for up to spin before they sleep.
func dialOwn(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), host string, deadline time.Time, cfg *tls.Config, alpn string, spin time.Duration) (net.Conn, error) {
	var nc net.Conn
	var err error
	if dial != nil {
		nc, err = dial(ctx, "tcp", host)
	} else {
		d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Deadline: deadline}
		if nc, err = d.DialContext(ctx, "tcp", host); err == nil {
			nc = blockingTCP(nc, spin)
		}
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
