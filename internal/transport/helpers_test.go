package transport

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines they started outlive
// them: servers and connections must all be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serveLoopback runs handle for each connection to a loopback port.
func serveLoopback(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return lis.Addr().String()
}

// serveHTTP answers each request on each connection with what reply
// writes, reading requests with net/http's parser; reply returning false
// closes the connection.
func serveHTTP(tb testing.TB, reply func(req *http.Request, body []byte, w io.Writer) bool) string {
	return serveLoopback(tb, func(nc net.Conn) {
		defer nc.Close()
		br := bufio.NewReader(nc)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, err := io.ReadAll(req.Body)
			if err != nil {
				return
			}
			if !reply(req, body, nc) {
				return
			}
		}
	})
}

func newReader(nc net.Conn) *bufio.Reader { return bufio.NewReader(nc) }
