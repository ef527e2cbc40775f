package transport

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// deadlineConn records the deadlines set on it.
type deadlineConn struct {
	net.Conn
	mu       sync.Mutex
	deadline time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return nil
}

func (c *deadlineConn) interrupted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline.Equal(aLongTimeAgo)
}

// A cancelled call's callback that runs only after the next call, with
// another context, has put a new connection in place must leave that
// connection alone: context.AfterFunc's stop does not wait for a callback
// already started, so this is an ordering the scheduler may produce, and
// the next call would fail with a timeout it never had. The callback of
// the context being watched still interrupts its connection.
func TestCancelWatchLateCallback(t *testing.T) {
	var callbacks []func()
	w := &cancelWatch{afterFunc: func(_ context.Context, f func()) func() bool {
		callbacks = append(callbacks, f)
		// The context is done and f has started in its own goroutine:
		// stop can no longer prevent it.
		return func() bool { return false }
	}}
	defer w.stop()

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	first := &deadlineConn{}
	w.watch(cancelled)
	w.set(first)
	w.set(nil) // the cancelled call dropped its connection and returned

	next := &deadlineConn{}
	ctx, cancelNext := context.WithCancel(context.Background())
	defer cancelNext()
	w.watch(ctx)
	w.set(next)
	callbacks[0]() // the first call's cancellation, late
	if next.interrupted() {
		t.Fatal("a cancellation of an earlier call's context interrupted the next call's connection")
	}
	callbacks[1]() // the watched context's own cancellation
	if !next.interrupted() {
		t.Fatal("the watched context's cancellation did not interrupt its connection")
	}
}

// A cancellation that reaches a connection between two calls (the
// interrupt a cancelled context's callback makes) does not fail the next
// call: a poller connection is revived by the call's deadline, a blocking
// one, shut down by the interrupt, is replaced.
func TestOwnConnLateInterrupt(t *testing.T) {
	for name, own := range ownConns(t) {
		t.Run(name, func(t *testing.T) {
			for i := range 3 {
				if err := own.call(context.Background()); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				own.conn.nc.SetDeadline(aLongTimeAgo) // what a late interrupt does
			}
		})
	}
}

// ownTest is an own connection of either protocol with a call that
// succeeds against its test server.
type ownTest struct {
	conn *ownConn
	call func(context.Context) error
}

// ownConns returns HTTP and gRPC own connections, plaintext and TLS, to
// test servers made for the test.
func ownConns(t *testing.T) map[string]ownTest {
	addr := serveHTTP(t, func(_ *http.Request, _ []byte, w io.Writer) bool {
		io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(tlsSrv.Close)
	clientTLS := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
	reply := func(r *h2test.Reply) { r.OK(h2test.Message([]byte("ok"))) }
	fake := h2test.New(t, reply)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fakeTLS := h2test.Serve(t, tls.NewListener(lis, &tls.Config{Certificates: tlsSrv.TLS.Certificates, NextProtos: []string{"h2"}}), reply)
	out := map[string]ownTest{}
	for name, cfg := range map[string]HTTPConnConfig{
		"http":     {Addr: addr},
		"http+tls": {Addr: tlsSrv.Listener.Addr().String(), TLS: clientTLS},
	} {
		hc := NewHTTPConn(cfg)
		t.Cleanup(func() { hc.Close() })
		out[name] = ownTest{&hc.ownConn, func(ctx context.Context) error {
			_, err := hc.Do(ctx, &HTTPRequest{Op: "get", Method: "GET", Path: "/"}, 0)
			return err
		}}
	}
	for name, cfg := range map[string]GRPCConnConfig{
		"grpc":     {Target: fake.Addr()},
		"grpc+tls": {Target: fakeTLS.Addr(), TLS: clientTLS},
	} {
		gc := NewGRPCConn(cfg)
		t.Cleanup(func() { gc.Close() })
		out[name] = ownTest{&gc.ownConn, func(ctx context.Context) error {
			_, err := gc.Invoke(ctx, &GRPCCall{Op: "call", Method: "/s/M"}, 0)
			return err
		}}
	}
	return out
}
