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
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newHTTPConn(t *testing.T, cfg HTTPConnConfig) *HTTPConn {
	t.Helper()
	c := NewHTTPConn(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

// Any method, path, headers and a body in several buffers reach the
// server as net/http reads them; the reply's status, headers and body come
// back, over one kept-alive connection.
func TestHTTPConnRequestAndReply(t *testing.T) {
	var conns atomic.Int64
	addr := serveLoopback(t, func(nc net.Conn) {
		conns.Add(1)
		defer nc.Close()
		br := newReader(nc)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			out := fmt.Sprintf("%s %s %s len=%d x-a=%s body=%s", req.Method, req.URL.RequestURI(), req.Host, req.ContentLength, req.Header.Get("X-A"), body)
			fmt.Fprintf(nc, "HTTP/1.1 201 Created\r\nX-Reply: yes\r\nx-other:  spaced \r\nContent-Length: %d\r\n\r\n%s", len(out), out)
		}
	})
	c := newHTTPConn(t, HTTPConnConfig{Addr: addr})
	for i, req := range []*HTTPRequest{
		{Op: "post", Method: "POST", Path: "/a/b?q=1", Header: []HeaderField{{"X-A", "1"}}, Body: [][]byte{[]byte("he"), nil, []byte("llo")}},
		{Op: "put", Method: "PUT", Path: "/put", Body: [][]byte{bytes.Repeat([]byte("x"), largeBody)}},
		{Op: "get", Method: "GET", Path: "/"},
	} {
		r, err := c.Do(context.Background(), req, time.Minute)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		var body []byte
		for _, b := range req.Body {
			body = append(body, b...)
		}
		want := fmt.Sprintf("%s %s %s len=%d x-a=%s body=%s", req.Method, req.Path, addr, len(body), map[bool]string{true: "1"}[i == 0], body)
		if r.Status != 201 || string(r.Body) != want {
			t.Fatalf("request %d: status %d body %.80q, want %.80q", i, r.Status, r.Body, want)
		}
		if v, ok := r.Header("x-reply"); !ok || string(v) != "yes" {
			t.Errorf("request %d: X-Reply %q %v", i, v, ok)
		}
		if v, ok := r.Header("X-Other"); !ok || string(v) != "spaced" {
			t.Errorf("request %d: X-Other %q %v", i, v, ok)
		}
		if _, ok := r.Header("X-Missing"); ok {
			t.Errorf("request %d: a header the reply lacks was found", i)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("three requests took %d connections, want 1", n)
	}
}

// Chunked and gzipped replies, and replies read to the connection's close.
func TestHTTPConnReplyFramings(t *testing.T) {
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	zw.Write([]byte("unzipped"))
	zw.Close()
	for name, tc := range map[string]struct{ raw, want string }{
		"chunked":         {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n", "abcde"},
		"gzip":            {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(zbuf.Len()) + "\r\n\r\n" + zbuf.String(), "unzipped"},
		"until close":     {"HTTP/1.1 200 OK\r\n\r\nto the end", "to the end"},
		"interim":         {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok"},
		"http/1.0 closes": {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok"},
	} {
		t.Run(name, func(t *testing.T) {
			addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
				io.WriteString(w, tc.raw)
				return false
			})
			c := newHTTPConn(t, HTTPConnConfig{Addr: addr})
			for i := range 2 {
				r, err := c.Do(context.Background(), &HTTPRequest{Op: "get", Method: "GET", Path: "/"}, time.Minute)
				if err != nil || string(r.Body) != tc.want {
					t.Fatalf("call %d: %v, body %q, want %q", i, err, bodyOf(r), tc.want)
				}
			}
		})
	}
}

func bodyOf(r *HTTPReply) []byte {
	if r == nil {
		return nil
	}
	return r.Body
}

// Replies that are not HTTP are protocol errors, not hangs or panics.
func TestHTTPConnMalformedReplies(t *testing.T) {
	for name, raw := range map[string]string{
		"status line":       "HTTP/2.0 200 OK\r\n\r\n",
		"header":            "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"content length":    "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
		"two lengths":       "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
		"transfer encoding": "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"gzip body":         "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"switching":         "HTTP/1.1 101 Switching Protocols\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
				io.WriteString(w, raw)
				return false
			})
			c := newHTTPConn(t, HTTPConnConfig{Addr: addr})
			_, err := c.Do(context.Background(), &HTTPRequest{Op: "m", Method: "GET", Path: "/"}, time.Minute)
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Op != "m" {
				t.Fatalf("got %v, want a *ProtocolError of op m", err)
			}
		})
	}
}

// A reply that does not come within the timeout fails the call as a
// transport timeout naming it; cancelling the context interrupts a call.
func TestHTTPConnTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c := newHTTPConn(t, HTTPConnConfig{Addr: srv.Listener.Addr().String()})
	req := &HTTPRequest{Op: "infer", Method: "POST", Path: "/slow"}
	_, err := c.Do(context.Background(), req, 20*time.Millisecond)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "20ms") ||
		!strings.Contains(err.Error(), "post http://"+srv.Listener.Addr().String()+"/slow") {
		t.Fatalf("timeout: got %v, want a transport error with context.DeadlineExceeded naming 20ms and the URL", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.Do(ctx, req, 0)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v, want a transport error with context.Canceled", err)
	}
}

// A kept-alive connection the server closed while idle costs a new
// connection and nothing else.
func TestHTTPConnServerClosesIdle(t *testing.T) {
	var served atomic.Int64
	addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
		served.Add(1)
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return false // closes without saying so
	})
	c := newHTTPConn(t, HTTPConnConfig{Addr: addr})
	for i := range 5 {
		if _, err := c.Do(context.Background(), &HTTPRequest{Op: "get", Method: "GET", Path: "/"}, time.Minute); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if served.Load() != 5 {
		t.Errorf("the server handled %d requests for 5 sent", served.Load())
	}
}

// TLS with the server name taken from the address.
func TestHTTPConnTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	t.Cleanup(srv.Close)
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c := newHTTPConn(t, HTTPConnConfig{Addr: srv.Listener.Addr().String(), TLS: cfg})
	for i := range 3 {
		r, err := c.Do(context.Background(), &HTTPRequest{Op: "get", Method: "GET", Path: "/tls"}, time.Minute)
		if err != nil || string(r.Body) != "/tls" {
			t.Fatalf("call %d: %v %q", i, err, bodyOf(r))
		}
	}
	bad := newHTTPConn(t, HTTPConnConfig{Addr: srv.Listener.Addr().String(), TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	if _, err := bad.Do(context.Background(), &HTTPRequest{Op: "get", Method: "GET", Path: "/"}, time.Minute); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("unknown CA: got %v, want a transport error", err)
	}
}

// A server that never ends its header section (or a chunked body's
// trailers) is refused once the section passes MaxHeaderBytes, as
// net/http's client refuses it, instead of keeping every line: before, a
// 200 MB header section was read to the end.
func TestHTTPConnEndlessHeaders(t *testing.T) {
	line := "X-Filler: " + strings.Repeat("a", 1000) + "\r\n"
	lines := MaxHeaderBytes/len(line) + 2
	for name, parts := range map[string][2]string{
		"headers":  {"HTTP/1.1 200 OK\r\n", "Content-Length: 0\r\n\r\n"},
		"trailers": {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n", "\r\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var wrote atomic.Int64
			addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
				io.WriteString(w, parts[0])
				for i := 0; i < lines; i++ {
					n, err := io.WriteString(w, line)
					wrote.Add(int64(n))
					if err != nil {
						return false
					}
				}
				io.WriteString(w, parts[1])
				return false
			})
			c := newHTTPConn(t, HTTPConnConfig{Addr: addr})
			_, err := c.Do(context.Background(), &HTTPRequest{Op: "m", Method: "GET", Path: "/"}, time.Minute)
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "section longer than 10485760 bytes") {
				t.Fatalf("got %v, want the section refused at its bound", err)
			}
		})
	}
}
