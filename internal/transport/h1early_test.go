package transport

import (
	"bufio"
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/memnet"
)

// A server that answers before reading the body (413 for a body too
// large) and then stops reading must not hold the call until its
// deadline: the request is written while the reply is read, and the
// reply ends the call at once. The connection, left mid-request, is not
// used again.
func TestHTTPConnEarlyReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mem memnet.Network
		lis, err := mem.Listen(context.Background(), "tcp", "server:1")
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		t.Cleanup(func() { close(stop); lis.Close() })
		accepted := 0
		go func() {
			for {
				nc, err := lis.Accept()
				if err != nil {
					return
				}
				accepted++
				go func() {
					defer nc.Close()
					if _, err := http.ReadRequest(bufio.NewReader(nc)); err != nil {
						return
					}
					nc.Write([]byte("HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 8\r\n\r\ntoo big!"))
					<-stop // and never read the body
				}()
			}
		}()
		c := newHTTPConn(t, HTTPConnConfig{Addr: "server:1", Dial: mem.Dial})
		body := make([]byte, 16<<20) // far beyond what the connection buffers
		for i := range 2 {
			start := time.Now()
			r, err := c.Do(context.Background(), &HTTPRequest{Op: "t", Method: "POST", Path: "/", Body: [][]byte{body}}, time.Hour)
			if err != nil {
				t.Fatalf("call %d: %v after %v", i, err, time.Since(start))
			}
			if r.Status != 413 || string(r.Body) != "too big!" || time.Since(start) > time.Second {
				t.Fatalf("call %d: %d %q after %v, want the 413 at once", i, r.Status, r.Body, time.Since(start))
			}
		}
		if accepted != 2 {
			t.Errorf("%d connections for two calls, want 2: a connection left mid-request was reused", accepted)
		}
	})
}
