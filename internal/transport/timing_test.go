package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// tensorSizes are the request and reply sizes the timing tests cross:
// below every window, above the 64 KiB stream window, a 1×3×640×640 FP32
// image (4.9 MB) and 64 MiB.
var tensorSizes = []int{1 << 10, 256 << 10, 4_915_200, 64 << 20}

// compute is the fake servers' service time, between reading a request
// whole and answering it.
const compute = 25 * time.Millisecond

// On testing/synctest's clock the wait for the reply is exactly the
// server's service time, whatever the size: it runs from the request's
// last byte to the reply's first (the HEADERS frame on HTTP/2, the status
// line on HTTP/1.1). The fake HTTP/2 server returns window updates while
// the request comes in, as grpc-go's does: a frame of the stream that is
// not the reply.
func TestWaitIsTheServersTime(t *testing.T) {
	for _, size := range tensorSizes {
		for _, proto := range []string{"http", "grpc"} {
			t.Run(fmt.Sprintf("%s/%d", proto, size), func(t *testing.T) {
				if raceEnabled && size > 16<<20 {
					t.Skip("64 MiB under the race detector takes tens of seconds; make test runs it without -race")
				}
				synctest.Test(t, func(t *testing.T) {
					var mem memnet.Network
					lis, err := mem.Listen(context.Background(), "tcp", "server:1")
					if err != nil {
						t.Fatal(err)
					}
					payload := make([]byte, size)
					var call func() (time.Duration, int, error)
					if proto == "grpc" {
						h2test.Serve(t, lis, func(r *h2test.Reply) {
							time.Sleep(compute)
							r.OK(h2test.Message(payload))
						})
						c := newGRPCConn(t, GRPCConnConfig{Target: "server:1", Dial: mem.Dial})
						call = func() (time.Duration, int, error) {
							r, err := c.Invoke(context.Background(), &GRPCCall{Op: "t", Method: "/s/M", Msg: [][]byte{payload}}, time.Hour)
							if err != nil {
								return 0, 0, err
							}
							return r.Wait, len(r.Msg), nil
						}
					} else {
						go serveSlowHTTP(lis, payload)
						t.Cleanup(func() { lis.Close() })
						c := newHTTPConn(t, HTTPConnConfig{Addr: "server:1", Dial: mem.Dial})
						call = func() (time.Duration, int, error) {
							r, err := c.Do(context.Background(), &HTTPRequest{Op: "t", Method: "POST", Path: "/", Body: [][]byte{payload}}, time.Hour)
							if err != nil {
								return 0, 0, err
							}
							return r.Wait, len(r.Body), nil
						}
					}
					for i := range 2 {
						start := time.Now()
						wait, n, err := call()
						total := time.Since(start)
						if err != nil {
							t.Fatalf("call %d: %v", i, err)
						}
						if n != size {
							t.Fatalf("call %d: %d reply bytes, want %d", i, n, size)
						}
						if wait != compute || total < wait {
							t.Fatalf("call %d: wait %v of %v in all, want the server's %v", i, wait, total, compute)
						}
					}
				})
			})
		}
	}
}

// serveSlowHTTP answers each request, read whole, after compute with
// payload.
func serveSlowHTTP(lis net.Listener, payload []byte) {
	for {
		nc, err := lis.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			br := bufio.NewReader(nc)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				if _, err := io.Copy(io.Discard, req.Body); err != nil {
					return
				}
				time.Sleep(compute)
				fmt.Fprintf(nc, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(payload))
				if _, err := nc.Write(payload); err != nil {
					return
				}
			}
		}()
	}
}
