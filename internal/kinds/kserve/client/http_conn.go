package client

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve/wire"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// httpConn is one caller's own HTTP/1.1 keep-alive connection for infer
// requests. The caller's goroutine writes the request and reads the reply
// itself: net/http's transport hands every request to a writer goroutine
// and every reply back from a reader goroutine, and at concurrency 1 those
// two wake-ups (each often waking an idle OS thread) cost more CPU than the
// exchange. Request bytes and reply handling are the shared client's
// (encodeInfer, decodeInferReply), so both paths send and accept the same.
type httpConn struct {
	c    *httpClient
	host string // Host header and TLS server name source

	ownConn

	x    httpExchange // request body buffers
	head []byte       // request line and headers
	zr   *gzip.Reader

	lastHdrLen string // last reply Inference-Header-Content-Length value
}

// NewConn returns a connection of the caller's own, or nil when the options
// need the shared transport: a cap on connections (MaxConnections) is the
// transport's to keep, and header values it would refuse stay its errors.
func (c *httpClient) NewConn() Conn {
	if c.opts.MaxConnections > 0 || !validHeaders(c.headers) {
		return nil
	}
	return &httpConn{c: c, host: c.base[len(c.scheme())+3:]}
}

func (c *httpClient) scheme() string {
	if c.tlsCfg != nil {
		return "https"
	}
	return "http"
}

// validHeaders holds when every extra header can go on the wire as is.
func validHeaders(h http.Header) bool {
	for k, vs := range h {
		if k == "" || bytes.ContainsAny([]byte(k), " \t\r\n:") {
			return false
		}
		for _, v := range vs {
			if bytes.ContainsAny([]byte(v), "\r\n\x00") {
				return false
			}
		}
	}
	return true
}

func (hc *httpConn) dial(ctx context.Context, deadline time.Time) error {
	nc, err := dialOwn(ctx, hc.c.opts.Dial, hc.host, deadline, hc.c.tlsCfg, "")
	if err != nil {
		return err
	}
	hc.attach(nc, 16<<10)
	return nil
}

func (hc *httpConn) Infer(ctx context.Context, req *InferRequest, timeout time.Duration) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("http infer: empty model name")
	}
	start := time.Now()
	c := hc.c
	deadline, limit := callDeadline(ctx, start, c.opts.Timeout, timeout)
	hc.x.parts = hc.x.parts[:0]
	body, headerLen, err := c.encodeInfer(&hc.x, req)
	if err != nil {
		return nil, fmt.Errorf("http %s: %w", op, err)
	}
	url := c.inferURL(req.Model, req.Version)
	hc.head = hc.appendHead(hc.head[:0], url[len(c.base):], headerLen, hc.bodyLen(body))
	hc.cancelWatch.watch(ctx)

	var r wireReply
	var wrote, first time.Time
	for attempt := 0; ; attempt++ {
		hc.dropDead()
		if hc.nc == nil {
			if err := hc.dial(ctx, deadline); err != nil {
				return nil, hc.transportError(ctx, url, limit, err)
			}
		}
		retryable := hc.reused && attempt == 0
		hc.nc.SetDeadline(deadline)
		if err := ctx.Err(); err != nil { // cancelled before the deadline above took hold
			hc.drop()
			return nil, hc.transportError(ctx, url, limit, err)
		}
		if err := hc.write(body); err != nil {
			hc.drop()
			if retryable && isConnReset(err) {
				continue
			}
			return nil, hc.transportError(ctx, url, limit, err)
		}
		wrote = time.Now()
		if _, err := hc.br.Peek(1); err != nil {
			hc.drop()
			// A kept-alive connection the server closed while idle fails
			// before any reply byte, and the request goes once more on a
			// fresh connection. net/http's reader goroutine notices such
			// a close while the connection idles and never sends on it;
			// without that goroutine the first read after the write is
			// where the close shows. A server that read the request and
			// then closed without a byte of reply would see it twice.
			if retryable && isConnReset(err) {
				continue
			}
			return nil, hc.transportError(ctx, url, limit, err)
		}
		first = time.Now()
		if err := hc.readReply(&r); err != nil {
			hc.drop()
			var pe *wireError
			if errors.As(err, &pe) {
				return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
			}
			return nil, hc.transportError(ctx, url, limit, err)
		}
		break
	}
	if r.close {
		hc.drop()
	} else {
		hc.reused = true
	}
	if r.status != http.StatusOK {
		return nil, httpServerError(op, &httpReply{status: r.status, body: r.body})
	}
	out, err := decodeInferReply(r.hdrLen, r.body, req, &c.names)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolHTTP, Op: op, Err: err}
	}
	wait := first.Sub(wrote)
	out.Timing = Timing{Wait: wait, SendRecv: time.Since(start) - wait}
	return out, nil
}

// callDeadline is the earliest of ctx's deadline and the two timeouts
// (0 = none); limit is the timeout that set it, for the error message.
func callDeadline(ctx context.Context, now time.Time, timeouts ...time.Duration) (deadline time.Time, limit time.Duration) {
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

func (hc *httpConn) bodyLen(body []byte) int {
	if len(hc.x.parts) == 0 {
		return len(body)
	}
	n := 0
	for _, p := range hc.x.parts {
		n += len(p)
	}
	return n
}

// write sends headers and body with one write(2), or one writev(2) when
// large inputs travel from their own memory.
func (hc *httpConn) write(body []byte) error {
	if len(hc.x.parts) > 0 {
		bufs := make(net.Buffers, 0, 1+len(hc.x.parts))
		bufs = append(bufs, hc.head)
		bufs = append(bufs, hc.x.parts...)
		if bw, ok := hc.nc.(interface {
			WriteBuffers([][]byte) (int64, error)
		}); ok {
			_, err := bw.WriteBuffers(bufs)
			return err
		}
		_, err := bufs.WriteTo(hc.nc)
		return err
	}
	n := len(hc.head)
	hc.head = append(hc.head, body...)
	_, err := hc.nc.Write(hc.head)
	hc.head = hc.head[:n]
	return err
}

// appendHead writes the request line and headers net/http would send for
// the same request.
func (hc *httpConn) appendHead(dst []byte, path string, headerLen, bodyLen int) []byte {
	c := hc.c
	dst = append(dst, "POST "...)
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, hc.host...)
	dst = append(dst, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(bodyLen), 10)
	if headerLen >= 0 {
		dst = append(dst, "\r\nContent-Type: application/octet-stream\r\n"...)
		dst = append(dst, wire.HeaderContentLength...)
		dst = append(dst, ": "...)
		dst = strconv.AppendInt(dst, int64(headerLen), 10)
	} else {
		dst = append(dst, "\r\nContent-Type: application/json"...)
	}
	if c.opts.Gzip {
		dst = append(dst, "\r\nContent-Encoding: gzip\r\nAccept-Encoding: gzip"...)
	}
	for k, vs := range c.headers {
		if c.opts.Gzip && k == "Accept-Encoding" {
			continue
		}
		for _, v := range vs {
			dst = append(dst, "\r\n"...)
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
		}
	}
	return append(dst, "\r\n\r\n"...)
}

func (hc *httpConn) transportError(ctx context.Context, url string, limit time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		if limit > 0 {
			err = fmt.Errorf("%w (no reply within %v)", context.DeadlineExceeded, limit)
		} else {
			err = context.DeadlineExceeded
		}
	}
	return &transport.TransportError{Protocol: plan.ProtocolHTTP, Op: "infer", Err: fmt.Errorf("post %s: %w", url, err)}
}

// isConnReset reports the ways a write or first read fails on a connection
// the server had already closed.
func isConnReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// wireReply is a reply read off the connection.
type wireReply struct {
	status int
	hdrLen string // Inference-Header-Content-Length, "" when absent
	body   []byte
	close  bool // the connection cannot carry another request
}

// wireError is a reply that is not valid HTTP/1.x.
type wireError struct{ msg string }

func (e *wireError) Error() string { return e.msg }

func badReply(format string, args ...any) error {
	return &wireError{msg: fmt.Sprintf(format, args...)}
}

// readReply reads one reply: 1xx interim replies are skipped, the body is
// read whole (Content-Length, chunked or until close) and gunzipped when
// the server compressed it.
func (hc *httpConn) readReply(r *wireReply) error {
	for {
		*r = wireReply{}
		var clen int64 = -1
		var chunked, gz bool
		line, err := hc.readLine()
		if err != nil {
			return err
		}
		minor, status, ok := parseStatusLine(line)
		if !ok {
			return badReply("malformed status line %q", truncate(string(line), 64))
		}
		r.status = status
		r.close = minor == 0
		for {
			line, err := hc.readLine()
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok || len(name) == 0 || name[0] == ' ' || name[0] == '\t' {
				return badReply("malformed header line %q", truncate(string(line), 64))
			}
			value = bytes.TrimSpace(value)
			switch {
			case asciiEqualFold(name, "Content-Length"):
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || n < 0 || (clen >= 0 && n != clen) {
					return badReply("invalid Content-Length %q", truncate(string(value), 32))
				}
				clen = n
			case asciiEqualFold(name, "Transfer-Encoding"):
				if !asciiEqualFold(value, "chunked") {
					return badReply("unsupported Transfer-Encoding %q", truncate(string(value), 32))
				}
				chunked = true
			case asciiEqualFold(name, "Content-Encoding"):
				gz = asciiEqualFold(value, "gzip")
			case asciiEqualFold(name, "Connection"):
				for _, tok := range bytes.Split(value, []byte(",")) {
					tok = bytes.TrimSpace(tok)
					if asciiEqualFold(tok, "close") {
						r.close = true
					} else if asciiEqualFold(tok, "keep-alive") && minor == 0 {
						r.close = false
					}
				}
			case asciiEqualFold(name, wire.HeaderContentLength):
				if string(value) != hc.lastHdrLen {
					hc.lastHdrLen = string(value)
				}
				r.hdrLen = hc.lastHdrLen
			}
		}
		if status >= 100 && status < 200 {
			if status == http.StatusSwitchingProtocols {
				return badReply("unexpected 101 Switching Protocols")
			}
			continue
		}
		switch {
		case chunked:
			body, err := io.ReadAll(httputil.NewChunkedReader(hc.br))
			if err != nil {
				return err
			}
			for { // trailer section, up to its blank line
				line, err := hc.readLine()
				if err != nil {
					return err
				}
				if len(line) == 0 {
					break
				}
			}
			r.body = body
		case clen >= 0:
			r.body = make([]byte, clen)
			if _, err := io.ReadFull(hc.br, r.body); err != nil {
				return fmt.Errorf("reading reply body: %w", err)
			}
		case status == http.StatusNoContent || status == http.StatusNotModified:
		default:
			body, err := io.ReadAll(hc.br)
			if err != nil {
				return fmt.Errorf("reading reply body: %w", err)
			}
			r.body, r.close = body, true
		}
		if gz && len(r.body) > 0 {
			return hc.gunzip(r)
		}
		return nil
	}
}

func (hc *httpConn) gunzip(r *wireReply) error {
	var err error
	if hc.zr == nil {
		hc.zr, err = gzip.NewReader(bytes.NewReader(r.body))
	} else {
		err = hc.zr.Reset(bytes.NewReader(r.body))
	}
	if err == nil {
		r.body, err = io.ReadAll(hc.zr)
	}
	if err != nil {
		return badReply("reading gzip reply: %v", err)
	}
	return nil
}

// readLine returns one header-section line without its CRLF. The slice is
// valid until the next read.
func (hc *httpConn) readLine() ([]byte, error) {
	line, err := hc.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, badReply("reply header line longer than %d bytes", hc.br.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseStatusLine reads "HTTP/1.x NNN reason".
func parseStatusLine(line []byte) (minor, status int, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return 0, 0, false
	}
	switch line[7] {
	case '0':
	case '1':
		minor = 1
	default:
		return 0, 0, false
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, 0, false
		}
		status = status*10 + int(d-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return 0, 0, false
	}
	return minor, status, true
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
