package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
)

func newConn(t *testing.T, opts Options) Conn {
	t.Helper()
	cc, ok := newClient(t, opts).(ConnClient)
	if !ok {
		t.Fatalf("the %s client offers no connections of its own", opts.Protocol)
	}
	conn := cc.NewConn()
	if conn == nil {
		t.Fatal("NewConn returned nil")
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// countConns counts the TCP connections a test server accepted.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// One connection carries every request while the server keeps it alive,
// with the same replies as the shared transport's.
func TestHTTPConnKeepAlive(t *testing.T) {
	f := &fakeHTTP{}
	srv := httptest.NewUnstartedServer(f)
	conns := countConns(srv)
	srv.Start()
	t.Cleanup(srv.Close)
	conn := newConn(t, Options{Protocol: "http", URL: srv.URL})
	for i := range 20 {
		resp, err := conn.Infer(context.Background(), simpleRequest(strconv.Itoa(i)), 0)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.ID != strconv.Itoa(i) || resp.Model != "simple" || resp.Version != "1" {
			t.Fatalf("request %d: reply id %q model %q version %q", i, resp.ID, resp.Model, resp.Version)
		}
		checkSimpleOutput(t, resp, "OUTPUT0", 1)
		checkSimpleOutput(t, resp, "OUTPUT1", -1)
		if resp.Timing.Wait <= 0 || resp.Timing.SendRecv <= 0 {
			t.Fatalf("request %d: timing %+v", i, resp.Timing)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 requests opened %d connections, want 1", n)
	}
}

// The connection's requests are byte for byte those of the shared
// transport: same line, headers the server acts on, and body.
func TestHTTPConnSendsWhatTransportSends(t *testing.T) {
	type seen struct {
		line, ctype, hlen, enc, accept, auth string
		length                               int64
		body                                 []byte
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method + " " + r.URL.RequestURI() + " " + r.Proto, r.Header.Get("Content-Type"),
			r.Header.Get(kservev2.HeaderContentLength), r.Header.Get("Content-Encoding"), r.Header.Get("Accept-Encoding"),
			r.Header.Get("Authorization"), r.ContentLength, body})
		mu.Unlock()
		w.WriteHeader(500)
	}))
	t.Cleanup(srv.Close)
	for _, gz := range []bool{false, true} {
		mu.Lock()
		got = nil
		mu.Unlock()
		opts := Options{Protocol: "http", URL: srv.URL, Gzip: gz, Headers: map[string]string{"authorization": "Bearer x"}}
		c := newClient(t, opts)
		conn := c.(ConnClient).NewConn()
		req := simpleRequest("same")
		req.Version = "1"
		_, err1 := c.Infer(context.Background(), req)
		_, err2 := conn.Infer(context.Background(), req, 0)
		conn.Close()
		mu.Lock()
		seenNow := append([]seen(nil), got...)
		mu.Unlock()
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
			t.Fatalf("gzip %v: errors differ: transport %v, conn %v", gz, err1, err2)
		}
		if len(seenNow) != 2 {
			t.Fatalf("gzip %v: server saw %d requests", gz, len(seenNow))
		}
		a, b := seenNow[0], seenNow[1]
		if a.line != b.line || a.ctype != b.ctype || a.hlen != b.hlen || a.enc != b.enc || a.accept != b.accept ||
			a.auth != b.auth || a.length != b.length || !bytes.Equal(a.body, b.body) {
			t.Errorf("gzip %v: transport sent %+v\nconn sent %+v", gz, a, b)
		}
	}
}

// A server that closes the connection, announced or not, costs a new
// connection and nothing else: every request is answered, each reaches the
// server once, and a reply without Content-Length is read to the close.
func TestHTTPConnServerCloses(t *testing.T) {
	reply := func(id string) []byte {
		hdr := []byte(`{"id":"` + id + `","model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}}]}`)
		return kservev2.EncodeBinaryBody(hdr, []byte{7, 0, 0, 0})
	}
	for _, mode := range []string{"announced", "silent", "until-close"} {
		t.Run(mode, func(t *testing.T) {
			var served, accepted atomic.Int64
			addr := serveLoopback(t, func(nc net.Conn) {
				accepted.Add(1)
				defer nc.Close()
				br := bufio.NewReader(nc)
				// Two requests per connection, then close.
				for range 2 {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					served.Add(1)
					body := reply(req.Header.Get("X-Id"))
					var head string
					switch {
					case mode == "until-close":
						head = "HTTP/1.1 200 OK\r\nInference-Header-Content-Length: " + strconv.Itoa(len(body)-4) + "\r\n\r\n"
					case mode == "announced" && served.Load()%2 == 0:
						head = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) +
							"\r\nInference-Header-Content-Length: " + strconv.Itoa(len(body)-4) + "\r\n\r\n"
					default:
						head = "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(body)) +
							"\r\nInference-Header-Content-Length: " + strconv.Itoa(len(body)-4) + "\r\n\r\n"
					}
					nc.Write(append([]byte(head), body...))
					if mode == "until-close" {
						return
					}
				}
			})
			conn := newConn(t, Options{Protocol: "http", URL: addr, Headers: map[string]string{"X-Id": "r"}})
			const n = 9
			for i := range n {
				resp, err := conn.Infer(context.Background(), &InferRequest{Model: "simple"}, 0)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if out, ok := resp.Output("OUTPUT0"); !ok || !bytes.Equal(out.Raw, []byte{7, 0, 0, 0}) {
					t.Fatalf("request %d: outputs %+v", i, resp.Outputs)
				}
			}
			if served.Load() != n {
				t.Errorf("server handled %d requests for %d sent", served.Load(), n)
			}
			if accepted.Load() < 2 {
				t.Errorf("%d connections for %d requests on a server closing after two", accepted.Load(), n)
			}
		})
	}
}

// A reply that does not come within the timeout fails the call as a
// transport timeout; cancelling the caller's context interrupts a call.
func TestHTTPConnTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	conn := newConn(t, Options{Protocol: "http", URL: srv.URL})

	_, err := conn.Infer(context.Background(), simpleRequest("t"), 20*time.Millisecond)
	if !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "20ms") {
		t.Fatalf("timeout: got %v, want a transport error with context.DeadlineExceeded naming 20ms", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := conn.Infer(ctx, simpleRequest("c"), 0)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v, want a transport error with context.Canceled", err)
	}
	if _, err := conn.Infer(ctx, simpleRequest("after"), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: got %v", err)
	}
}

// Gzip both ways (the fake server streams its compressed reply, so it
// arrives chunked), and TLS with the server name taken from the URL.
func TestHTTPConnGzipAndTLS(t *testing.T) {
	f := &fakeHTTP{}
	plain := httptest.NewServer(f)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(f)
	t.Cleanup(tlsSrv.Close)
	pool := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
	for name, opts := range map[string]Options{
		"gzip":      {Protocol: "http", URL: plain.URL, Gzip: true},
		"tls":       {Protocol: "http", URL: tlsSrv.URL, TLS: pool},
		"tls+gzip":  {Protocol: "http", URL: tlsSrv.URL, TLS: pool, Gzip: true},
		"plaintext": {Protocol: "http", URL: plain.URL},
	} {
		t.Run(name, func(t *testing.T) {
			conn := newConn(t, opts)
			for i := range 3 {
				resp, err := conn.Infer(context.Background(), simpleRequest(name), 0)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				checkSimpleOutput(t, resp, "OUTPUT0", 1)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	gz := 0
	for _, h := range f.headers {
		if h.Get("Content-Encoding") == "gzip" {
			gz++
		}
	}
	if gz != 6 {
		t.Errorf("%d gzipped requests reached the server, want 6", gz)
	}
}

// Large inputs go from their own memory (header and tensors in one
// writev); the server must still see the whole body.
func TestHTTPConnLargeInputs(t *testing.T) {
	f, srv := newFakeHTTP(t)
	_ = f
	conn := newConn(t, Options{Protocol: "http", URL: srv.URL})
	n := largeInputs // INT32 elements: 4× the threshold in bytes
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i], b[i] = int32(i), 1
	}
	req := &InferRequest{Model: "simple", Inputs: []Input{
		{Tensor: tensor.Tensor{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1, int64(n)}, Raw: tensor.EncodeInt32s(a)}},
		{Tensor: tensor.Tensor{Name: "INPUT1", DataType: tensor.INT32, Shape: []int64{1, int64(n)}, Raw: tensor.EncodeInt32s(b)}},
	}}
	for _, r := range []*InferRequest{req, simpleRequest("small"), req} {
		resp, err := conn.Infer(context.Background(), r, 0)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := resp.Output("OUTPUT0")
		v, err := tensor.DecodeInt32s(out.Raw)
		if err != nil || len(v) != len(r.Inputs[0].Raw)/4 || v[len(v)-1] != int32(len(v)) {
			t.Fatalf("OUTPUT0: %d values, last %v, err %v", len(v), v[len(v)-1:], err)
		}
	}
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
		"reply json":        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{x}",
	} {
		t.Run(name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lis.Close() })
			go func() {
				nc, err := lis.Accept()
				if err != nil {
					return
				}
				defer nc.Close()
				if req, err := http.ReadRequest(bufio.NewReader(nc)); err == nil {
					io.Copy(io.Discard, req.Body)
					nc.Write([]byte(raw))
				}
			}()
			conn := newConn(t, Options{Protocol: "http", URL: lis.Addr().String()})
			_, err = conn.Infer(context.Background(), simpleRequest("m"), time.Minute)
			var pe *transport.ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ProtocolError", err)
			}
		})
	}
}

// Options the shared transport must enforce keep the shared path.
func TestHTTPConnNotOffered(t *testing.T) {
	for name, opts := range map[string]Options{
		"max connections": {Protocol: "http", URL: "127.0.0.1:1", MaxConnections: 2},
		"bad header":      {Protocol: "http", URL: "127.0.0.1:1", Headers: map[string]string{"X-A": "a\r\nb"}},
	} {
		if conn := newClient(t, opts).(ConnClient).NewConn(); conn != nil {
			t.Errorf("%s: NewConn offered a connection", name)
		}
	}
}
