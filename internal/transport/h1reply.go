package transport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"slices"
	"strconv"
)

// wireError is a reply that is not valid HTTP/1.x.
type wireError struct{ msg string }

func (e *wireError) Error() string { return e.msg }

func badReply(format string, args ...any) error {
	return &wireError{msg: fmt.Sprintf(format, args...)}
}

// framing is what a reply's head says about its body.
type framing struct {
	minor   int   // HTTP/1.minor
	clen    int64 // Content-Length, -1 when absent
	chunked bool
	gzip    bool
}

// readReply reads one reply: 1xx interim replies are skipped, the body is
// read whole (Content-Length, chunked or until close) and gunzipped when
// the server compressed it.
func (c *HTTPConn) readReply(r *HTTPReply) error {
	for {
		var f framing
		if err := c.readHead(r, &f); err != nil {
			return err
		}
		if r.Status >= 100 && r.Status < 200 {
			if r.Status == http.StatusSwitchingProtocols {
				return badReply("unexpected 101 Switching Protocols")
			}
			continue
		}
		if err := c.readBody(r, &f); err != nil {
			return err
		}
		if f.gzip && len(r.Body) > 0 {
			return c.gunzip(r)
		}
		return nil
	}
}

// readHead reads the status line and the header section.
func (c *HTTPConn) readHead(r *HTTPReply, f *framing) error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	minor, status, ok := parseStatusLine(line)
	if !ok {
		return badReply("malformed status line %q", truncate(string(line), 64))
	}
	*r = HTTPReply{Status: status, close: minor == 0, header: r.header[:0]}
	*f = framing{minor: minor, clen: -1}
	size := len(line)
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if size += len(line) + 2; size > MaxHeaderBytes {
			return badReply("reply header section longer than %d bytes", MaxHeaderBytes)
		}
		if err := headerLine(line, r, f); err != nil {
			return err
		}
	}
}

// MaxHeaderBytes bounds a reply's header section (and a chunked body's
// trailer section), as net/http's client does by default
// (Transport.MaxResponseHeaderBytes, 10 MiB): a broken or hostile server
// that never ends its headers must not grow a worker's buffers without
// end. Each line is bounded by the read buffer already; this bounds their
// number.
const MaxHeaderBytes = 10 << 20

// headerLine records one header line, acting on those that frame the body
// or end the connection.
func headerLine(line []byte, r *HTTPReply, f *framing) error {
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 || name[0] == ' ' || name[0] == '\t' {
		return badReply("malformed header line %q", truncate(string(line), 64))
	}
	value = bytes.TrimSpace(value)
	r.header = append(append(append(append(r.header, name...), ':'), value...), '\n')
	switch {
	case asciiEqualFold(name, "Content-Length"):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 || (f.clen >= 0 && n != f.clen) {
			return badReply("invalid Content-Length %q", truncate(string(value), 32))
		}
		f.clen = n
	case asciiEqualFold(name, "Transfer-Encoding"):
		if !asciiEqualFold(value, "chunked") {
			return badReply("unsupported Transfer-Encoding %q", truncate(string(value), 32))
		}
		f.chunked = true
	case asciiEqualFold(name, "Content-Encoding"):
		f.gzip = asciiEqualFold(value, "gzip")
	case asciiEqualFold(name, "Connection"):
		connectionTokens(value, f.minor, r)
	}
	return nil
}

// connectionTokens applies a Connection header: close ends the connection
// after this reply, keep-alive keeps an HTTP/1.0 one.
func connectionTokens(value []byte, minor int, r *HTTPReply) {
	for _, tok := range bytes.Split(value, []byte(",")) {
		tok = bytes.TrimSpace(tok)
		if asciiEqualFold(tok, "close") {
			r.close = true
		} else if asciiEqualFold(tok, "keep-alive") && minor == 0 {
			r.close = false
		}
	}
}

// readBody reads the body as the head frames it, into the connection's
// reply buffer (reused from reply to reply, so that a run's memory is
// bounded by its concurrency times the reply size, and a reply costs no
// allocation once the buffer has grown to it).
func (c *HTTPConn) readBody(r *HTTPReply, f *framing) error {
	var err error
	switch {
	case f.chunked:
		if c.body, err = readAllInto(c.body[:0], httputil.NewChunkedReader(c.br), c.cfg.MaxReply); err != nil {
			return err
		}
		r.Body = c.body
		return c.skipTrailers()
	case f.clen > c.cfg.MaxReply:
		return badReply("reply body of %d bytes is over the limit of %d", f.clen, c.cfg.MaxReply)
	case f.clen >= 0:
		if c.body, err = readFull(c.body[:0], c.br, f.clen); err != nil {
			return fmt.Errorf("reading reply body: %w", err)
		}
		r.Body = c.body
	case r.Status == http.StatusNoContent || r.Status == http.StatusNotModified:
	default:
		if c.body, err = readAllInto(c.body[:0], c.br, c.cfg.MaxReply); err != nil {
			return fmt.Errorf("reading reply body: %w", err)
		}
		r.Body, r.close = c.body, true
	}
	return nil
}

// eagerBody is the largest declared length allocated before its bytes
// arrive; past it the buffer grows as they do, so a length the server does
// not send costs no more than what it sends.
const eagerBody = 64 << 20

// readFull reads n bytes from r appended to buf[:0], reusing buf's memory.
func readFull(buf []byte, r io.Reader, n int64) ([]byte, error) {
	if int64(cap(buf)) >= n || n <= eagerBody {
		buf = slices.Grow(buf[:0], int(n))[:n]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf = buf[:0]
	for int64(len(buf)) < n {
		k := int(min(n-int64(len(buf)), int64(max(len(buf), eagerBody))))
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readAllInto appends r's bytes to buf until EOF, failing past limit.
func readAllInto(buf []byte, r io.Reader, limit int64) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(len(buf), 32<<10))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, badReply("reply body over the limit of %d bytes", limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// skipTrailers reads a chunked body's trailer section, up to its blank
// line.
func (c *HTTPConn) skipTrailers() error {
	size := 0
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if size += len(line) + 2; size > MaxHeaderBytes {
			return badReply("reply trailer section longer than %d bytes", MaxHeaderBytes)
		}
	}
}

// gunzip decompresses the body into the connection's second buffer.
func (c *HTTPConn) gunzip(r *HTTPReply) error {
	c.zsrc.Reset(r.Body)
	var err error
	if c.zr == nil {
		c.zr, err = gzip.NewReader(&c.zsrc)
	} else {
		err = c.zr.Reset(&c.zsrc)
	}
	if err == nil {
		c.zbody, err = readAllInto(c.zbody[:0], c.zr, c.cfg.MaxReply)
	}
	if err != nil {
		var we *wireError
		if errors.As(err, &we) {
			return err
		}
		return badReply("reading gzip reply: %v", err)
	}
	r.Body = c.zbody
	return nil
}

// readLine returns one header-section line without its CRLF. The slice is
// valid until the next read.
func (c *HTTPConn) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, badReply("reply header line longer than %d bytes", c.br.Size())
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

// parseStatusLine reads "HTTP/1.x NNN reason" (100 ≤ NNN ≤ 999).
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
	if status < 100 || len(line) > 12 && line[12] != ' ' {
		return 0, 0, false
	}
	return minor, status, true
}

func asciiEqualFold[T []byte | string](b T, s string) bool {
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
