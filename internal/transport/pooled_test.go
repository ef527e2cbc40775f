package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// bytesAllocated returns the heap bytes f allocated.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A reply is read into the connection's buffer, reused from call to call:
// a run's memory is bounded by its concurrency times the reply size, and
// a large reply costs no allocation of its size once the buffer fits it.
func TestOwnConnsReuseReplyBuffers(t *testing.T) {
	const size, calls = 1 << 20, 8
	payload := make([]byte, size)
	addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", size)
		w.Write(payload)
		return true
	})
	hc := newHTTPConn(t, HTTPConnConfig{Addr: addr})
	msg := h2test.Message(payload)
	fake := h2test.New(t, func(r *h2test.Reply) { r.OK(msg) })
	gc := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr()})
	for name, call := range map[string]func() error{
		"http": func() error {
			_, err := hc.Do(context.Background(), &HTTPRequest{Op: "t", Method: "GET", Path: "/"}, time.Minute)
			return err
		},
		"grpc": func() error {
			_, err := gc.Invoke(context.Background(), &GRPCCall{Op: "t", Method: "/s/M"}, time.Minute)
			return err
		},
	} {
		if err := call(); err != nil { // the buffer grows to the reply
			t.Fatal(err)
		}
		var err error
		n := bytesAllocated(func() {
			for range calls {
				if err = call(); err != nil {
					return
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if n >= size {
			t.Errorf("%s: %d calls with a %d-byte reply allocated %d bytes: replies are not read into a reused buffer", name, calls, size, n)
		}
	}
}

// A reply's declared length over the limit is refused before anything is
// allocated for it, and a body without a length is cut at the limit.
func TestHTTPConnReplyLimit(t *testing.T) {
	for name, head := range map[string]string{
		"declared": "HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n",
		"chunked":  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n",
		"to close": "HTTP/1.1 200 OK\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			body := make([]byte, 1<<20)
			addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
				io.WriteString(w, head)
				w.Write(body)
				return false
			})
			c := newHTTPConn(t, HTTPConnConfig{Addr: addr, MaxReply: 64 << 10})
			var err error
			n := bytesAllocated(func() {
				_, err = c.Do(context.Background(), &HTTPRequest{Op: "t", Method: "GET", Path: "/"}, time.Minute)
			})
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a protocol error naming the limit", err)
			}
			if n > 1<<20 {
				t.Errorf("a refused reply allocated %d bytes", n)
			}
		})
	}
}
