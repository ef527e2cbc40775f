package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// HTTPConn is one caller's own HTTP/1.1 keep-alive connection. The
// caller's goroutine writes the request and reads the reply itself:
// net/http's transport hands every request to a writer goroutine and every
// reply back from a reader goroutine, and at concurrency 1 those two
// wake-ups (each often waking an idle OS thread) cost more CPU than the
// exchange. A large body is written by a helper goroutine while the
// caller reads, so that a server answering early is heard at once.
//
// An HTTPConn is not safe for concurrent use. What it returns is valid
// until its next call.
type HTTPConn struct {
	cfg    HTTPConnConfig
	scheme string

	ownConn

	head  []byte      // request line and headers
	iov   net.Buffers // head then the body's buffers, for one writev
	reply HTTPReply
	body  []byte // the reply body, reused
	zbody []byte // the reply body gunzipped, reused
	zsrc  bytes.Reader
	zr    *gzip.Reader

	wdone chan writeResult // the helper goroutine's write of a large body
}

// HTTPConnConfig says where an HTTPConn goes and how.
type HTTPConnConfig struct {
	// Addr is host:port: the address dialled, the Host header, and the
	// TLS server name unless TLS names one.
	Addr string
	TLS  *tls.Config // nil: plaintext
	// Dial, when set, opens connections instead of TCP (tests: an
	// in-memory network). Nil dials TCP, in blocking mode when a slot is
	// free (see blockingConn).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds every call besides its context and its own timeout;
	// 0 = none.
	Timeout time.Duration
	// MaxReply caps a reply body, compressed or not; 0 = DefaultMaxReply.
	MaxReply int64
	// Protocol names the protocol in errors; "" = http.
	Protocol plan.Protocol
	// BusyPoll is how long a blocking connection polls for a reply before
	// it sleeps (0: it sleeps at once); see blockingConn.spinRead.
	BusyPoll time.Duration
}

// DefaultMaxReply is the largest reply body an own connection accepts
// unless told otherwise: INT32_MAX, the message size gRPC servers such as
// Triton allow.
const DefaultMaxReply = 1<<31 - 1

// HTTPRequest is one request on an HTTPConn.
type HTTPRequest struct {
	Op     string // names the call in errors, e.g. "infer"
	Method string
	Path   string // absolute path with any query
	// Header is written after Host, User-Agent and Content-Length, in
	// order. Names and values must be valid on the wire (ValidHeader).
	Header []HeaderField
	// Body is sent as its buffers' concatenation, with one writev(2) when
	// the connection supports it: large tensors go from their own memory.
	Body [][]byte
}

// HeaderField is one header line.
type HeaderField struct{ Name, Value string }

// HTTPReply is a reply read whole. Body and Header's values are valid
// until the connection's next call.
type HTTPReply struct {
	Status int
	Body   []byte
	// Wait is the time from the request's last byte leaving the client
	// until the reply's first byte arrived (0 when the reply began before
	// the request was written whole).
	Wait time.Duration

	header []byte // the header lines, "name: value\n" each
	close  bool   // the connection cannot carry another request
}

// Header returns the first value of the named header (ASCII
// case-insensitive), or false.
func (r *HTTPReply) Header(name string) ([]byte, bool) {
	h := r.header
	for len(h) > 0 {
		i := 0
		for i < len(h) && h[i] != '\n' {
			i++
		}
		line := h[:i]
		if i < len(h) {
			h = h[i+1:]
		} else {
			h = nil
		}
		if len(line) > len(name) && line[len(name)] == ':' && asciiEqualFold(line[:len(name)], name) {
			return line[len(name)+1:], true
		}
	}
	return nil, false
}

// largeBody is the body size from which the body is written from its own
// buffers (writev) instead of copied behind the headers: the second
// iovec costs less than copying the tensor on every request.
const largeBody = 64 << 10

func bodyLen(body [][]byte) int {
	n := 0
	for _, b := range body {
		n += len(b)
	}
	return n
}

// NewHTTPConn returns a connection that dials on its first call.
func NewHTTPConn(cfg HTTPConnConfig) *HTTPConn {
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = DefaultMaxReply
	}
	if cfg.Protocol == "" {
		cfg.Protocol = plan.ProtocolHTTP
	}
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	return &HTTPConn{cfg: cfg, scheme: scheme}
}

// ValidHeader holds when a header line can go on the wire as is.
func ValidHeader(name, value string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		switch name[i] {
		case ' ', '\t', '\r', '\n', ':':
			return false
		}
	}
	for i := range len(value) {
		switch value[i] {
		case '\r', '\n', 0:
			return false
		}
	}
	return true
}

func (c *HTTPConn) dial(ctx context.Context, deadline time.Time) error {
	nc, err := dialOwn(ctx, c.cfg.Dial, c.cfg.Addr, deadline, c.cfg.TLS, "", c.cfg.BusyPoll)
	if err != nil {
		return err
	}
	c.attach(nc, 16<<10)
	return nil
}

// Do sends req and reads its reply. Failures to reach the server or to
// complete the exchange are *TransportError, replies that are not HTTP/1.x
// *ProtocolError; any status is a reply. A request on a kept-alive
// connection that the server closed while idle goes once more on a fresh
// connection.
func (c *HTTPConn) Do(ctx context.Context, req *HTTPRequest, timeout time.Duration) (*HTTPReply, error) {
	deadline, limit := CallDeadline(ctx, time.Now(), c.cfg.Timeout, timeout)
	c.head = c.appendHead(c.head[:0], req, bodyLen(req.Body))
	c.cancelWatch.watch(ctx)
	r := &c.reply
	for attempt := 0; ; attempt++ {
		c.dropDead()
		if c.nc == nil {
			if err := c.dial(ctx, deadline); err != nil {
				return nil, c.transportError(ctx, req, limit, err)
			}
		}
		retryable := c.reused && attempt == 0
		c.nc.SetDeadline(deadline)
		if err := ctx.Err(); err != nil { // cancelled before the deadline above took hold
			c.drop()
			return nil, c.transportError(ctx, req, limit, err)
		}
		replied, err := c.exchange(req, r)
		if err != nil {
			c.drop()
			// A kept-alive connection the server closed while idle fails
			// before any reply byte, and the request goes once more on a
			// fresh connection. net/http's reader goroutine notices such
			// a close while the connection idles and never sends on it;
			// without that goroutine the first read after the write is
			// where the close shows. A server that read the request and
			// then closed without a byte of reply would see it twice.
			if retryable && !replied && isConnReset(err) {
				continue
			}
			var we *wireError
			if errors.As(err, &we) {
				return nil, &ProtocolError{Protocol: c.cfg.Protocol, Op: req.Op, Err: err}
			}
			return nil, c.transportError(ctx, req, limit, err)
		}
		break
	}
	if r.close {
		c.drop()
	} else {
		c.reused = true
	}
	return r, nil
}

// writeResult is how the helper goroutine's write ended.
type writeResult struct {
	err error
	at  time.Time
}

// exchange writes the request and reads the reply on the current
// connection; replied says whether any reply byte arrived. A body of
// largeBody bytes or more is written by a helper goroutine while this one
// reads: a server may answer before reading it (413 for a body too
// large) and stop reading, and the reply, not the deadline, must end the
// call. A reply complete while the request is still going out cuts the
// write short; the connection, left mid-request, carries no more.
func (c *HTTPConn) exchange(req *HTTPRequest, r *HTTPReply) (replied bool, err error) {
	async := bodyLen(req.Body) >= largeBody
	var wrote time.Time
	if async {
		if c.wdone == nil {
			c.wdone = make(chan writeResult, 1)
		}
		go func() {
			err := c.write(req.Body)
			c.wdone <- writeResult{err, time.Now()}
		}()
	} else {
		if err := c.write(req.Body); err != nil {
			return false, err
		}
		wrote = time.Now()
	}
	_, err = c.br.Peek(1)
	first := time.Now()
	if err == nil {
		replied = true
		err = c.readReply(r)
	}
	if async {
		w, whole := c.endWrite(err != nil || r.close || r.Status >= 400)
		wrote = w.at
		if !whole {
			// The server stopped reading or closed: whatever it said is
			// the answer, and the connection is spent.
			r.close = true
		}
	}
	if err != nil {
		return replied, err
	}
	r.Wait = max(first.Sub(wrote), 0)
	return true, nil
}

// endWrite waits for the helper goroutine's write. With cut, a write
// still going is cut short: the read failed, or the server answered with
// an error or a close before taking the whole body (413 and the like) and
// may never read it. Otherwise the server answered a success and keeps
// the connection, so it reads the rest of the body (it must, to parse the
// next request), and the write is waited for. whole says whether the
// request went out whole.
func (c *HTTPConn) endWrite(cut bool) (w writeResult, whole bool) {
	if cut {
		select {
		case w = <-c.wdone:
			return w, w.err == nil
		default:
		}
		c.nc.SetWriteDeadline(aLongTimeAgo)
		w = <-c.wdone
		return w, false
	}
	w = <-c.wdone
	return w, w.err == nil
}

// write sends headers and body with one write(2) when the body is small
// (copied behind the headers), or one writev(2) otherwise.
func (c *HTTPConn) write(body [][]byte) error {
	if bodyLen(body) < largeBody {
		k := len(c.head)
		for _, b := range body {
			c.head = append(c.head, b...)
		}
		_, err := c.nc.Write(c.head)
		c.head = c.head[:k]
		return err
	}
	c.iov = append(append(c.iov[:0], c.head), body...)
	_, err := writeBuffers(c.nc, c.iov)
	clear(c.iov) // keep no tensor alive through the connection
	return err
}

// canWritev reports whether writeBuffers makes one writev(2) on nc.
func canWritev(nc net.Conn) bool {
	switch nc.(type) {
	case *net.TCPConn, interface {
		WriteBuffers([][]byte) (int64, error)
	}:
		return true
	}
	return false
}

// writeBuffers writes bufs with writev(2) where nc can: a blocking
// connection, or a poller TCP connection through net.Buffers.
func writeBuffers(nc net.Conn, bufs net.Buffers) (int64, error) {
	if bw, ok := nc.(interface {
		WriteBuffers([][]byte) (int64, error)
	}); ok {
		return bw.WriteBuffers(bufs)
	}
	return bufs.WriteTo(nc)
}

// appendHead writes the request line and the headers net/http would send
// for the same request.
func (c *HTTPConn) appendHead(dst []byte, req *HTTPRequest, bodyLen int) []byte {
	dst = append(dst, req.Method...)
	dst = append(dst, ' ')
	dst = append(dst, req.Path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.cfg.Addr...)
	dst = append(dst, "\r\nUser-Agent: Go-http-client/1.1"...)
	if bodyLen > 0 || req.Method == "POST" || req.Method == "PUT" {
		dst = append(dst, "\r\nContent-Length: "...)
		dst = strconv.AppendInt(dst, int64(bodyLen), 10)
	}
	for _, h := range req.Header {
		dst = append(dst, "\r\n"...)
		dst = append(dst, h.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, h.Value...)
	}
	return append(dst, "\r\n\r\n"...)
}

func (c *HTTPConn) transportError(ctx context.Context, req *HTTPRequest, limit time.Duration, err error) error {
	return &TransportError{Protocol: c.cfg.Protocol, Op: req.Op,
		Err: fmt.Errorf("%s %s://%s%s: %w", methodVerb(req.Method), c.scheme, c.cfg.Addr, req.Path, callFailure(ctx, limit, err))}
}

// methodVerb is the method as net/http's url.Error names it ("post").
func methodVerb(m string) string {
	b := []byte(m)
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

// callFailure names why a call on an own connection failed: the
// context's cancellation or deadline, the call's own timeout, or err.
func callFailure(ctx context.Context, limit time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		if limit > 0 {
			return fmt.Errorf("%w (no reply within %v)", context.DeadlineExceeded, limit)
		}
		return context.DeadlineExceeded
	}
	return err
}

// isConnReset reports the ways a write or first read fails on a
// connection the server had already closed.
func isConnReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// CallDeadline is the earliest of ctx's deadline and the timeouts (0 =
// none) from now; limit is the timeout that set it (0 when ctx did), for
// error messages.
func CallDeadline(ctx context.Context, now time.Time, timeouts ...time.Duration) (deadline time.Time, limit time.Duration) {
	for _, t := range timeouts {
		if t > 0 && (deadline.IsZero() || now.Add(t).Before(deadline)) {
			deadline, limit = now.Add(t), t
		}
	}
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline, limit = dl, 0
	}
	return deadline, limit
}
