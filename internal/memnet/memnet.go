// Package memnet is an in-memory network for tests: a server listens on a
// name, clients dial that name, and bytes travel through buffers in the
// test process. No socket, port or loopback interface is involved, so tests
// that are not about the transport do not depend on the machine's network
// stack, and they can run under testing/synctest, whose fake clock needs
// every blocked goroutine to wait on something inside the test.
//
// The connections are grpc-go's test/bufconn pipes, the maintained
// in-memory transport for gRPC; they carry HTTP just as well.
package memnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/test/bufconn"
)

// bufSize is each direction's buffer unless Network.Buffer says
// otherwise; writes beyond it wait for the reader, as on a socket.
const bufSize = 1 << 20

// Network holds the listeners of one test. The zero value is ready to use.
type Network struct {
	// Buffer is each direction's buffer of a connection (bufSize when
	// 0): bufconn allocates it whole, so a test of many connections
	// makes it small.
	Buffer int

	mu  sync.Mutex
	lns map[string]*listener
}

// Listen listens on addr, any non-empty name ("http", "127.0.0.1:8000").
// It has net.ListenConfig.Listen's shape, so it can stand in for it.
func (n *Network) Listen(_ context.Context, network, addr string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if addr == "" {
		return nil, &net.OpError{Op: "listen", Net: network, Err: fmt.Errorf("memnet: empty address")}
	}
	if n.lns[addr] != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: Addr(addr), Err: syscall.EADDRINUSE}
	}
	if n.lns == nil {
		n.lns = map[string]*listener{}
	}
	size := bufSize
	if n.Buffer > 0 {
		size = n.Buffer
	}
	l := &listener{Listener: bufconn.Listen(size), n: n, addr: Addr(addr)}
	n.lns[addr] = l
	return l, nil
}

// Dial connects to the listener on addr. Dialling a name nobody listens on
// is refused, as on a closed port. It has net.Dialer.DialContext's shape.
func (n *Network) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.lns[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: Addr(addr), Err: syscall.ECONNREFUSED}
	}
	c, err := l.DialContext(ctx)
	if err != nil {
		// A listener closed while dialling: refused as well.
		return nil, &net.OpError{Op: "dial", Net: network, Addr: Addr(addr), Err: fmt.Errorf("%w: %v", syscall.ECONNREFUSED, err)}
	}
	return &conn{Conn: c, local: Addr("client:0"), remote: l.addr}, nil
}

type listener struct {
	*bufconn.Listener
	n    *Network
	addr Addr
	once sync.Once
}

func (l *listener) Addr() net.Addr { return l.addr }

// Accept returns the server's side of a connection, which names the
// listener's address as its local one.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, local: l.addr, remote: Addr("client:0")}, nil
}

// Close stops accepting and frees the name; established connections stay
// open until their ends close them, as with TCP.
func (l *listener) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		if l.n.lns[string(l.addr)] == l {
			delete(l.n.lns, string(l.addr))
		}
		l.n.mu.Unlock()
	})
	return l.Listener.Close()
}

// conn gives bufconn's connections real addresses (servers log them and
// HTTP puts them in request fields) and exact deadlines. bufconn arms a
// deadline with time.AfterFunc and does not cancel a timer that has
// already fired: a deadline set in the past and then cleared, which is how
// net/http interrupts a pending read after every request, can still time
// out the next read. conn keeps the deadlines itself and retries a
// timeout that its own deadline does not explain.
type conn struct {
	net.Conn
	local, remote Addr

	mu     sync.Mutex
	rd, wd time.Time // current deadlines; zero: none
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) Read(b []byte) (int, error) {
	for {
		n, err := c.Conn.Read(b)
		if !c.stale(err, &c.rd, c.Conn.SetReadDeadline) {
			return n, err
		}
	}
}

func (c *conn) Write(b []byte) (int, error) {
	written := 0
	for {
		n, err := c.Conn.Write(b[written:])
		written += n
		if !c.stale(err, &c.wd, c.Conn.SetWriteDeadline) {
			return written, err
		}
	}
}

// stale reports whether err is a timeout that the deadline at dl does not
// explain; it then re-arms bufconn with that deadline, clearing its flag.
func (c *conn) stale(err error, dl *time.Time, set func(time.Time) error) bool {
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !dl.IsZero() && !time.Now().Before(*dl) {
		return false
	}
	set(*dl)
	return true
}

func (c *conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rd = t
	return c.Conn.SetReadDeadline(armable(t))
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wd = t
	return c.Conn.SetWriteDeadline(armable(t))
}

// armable is the time bufconn is given for deadline t: t itself, or for a
// deadline already past, one nanosecond from now. bufconn arms a deadline
// with time.AfterFunc, and inside a synctest bubble a timer due at once is
// run on the spot, on the system stack of the goroutine arming it; under
// the race detector that path crashed the test binary now and then (Go
// 1.26.8, SIGSEGV in runtime.(*timer).modify, from net/http ending a
// background read with a past deadline). A timer one nanosecond ahead
// fires from the bubble's clock instead, as soon as the reader waiting on
// it lets the clock move; outside a bubble, at once. conn keeps t itself,
// so the timeout is still explained by the deadline.
func armable(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	if now := time.Now(); !t.After(now) {
		return now.Add(time.Nanosecond)
	}
	return t
}

// Addr is a memnet address: the name given to Listen.
type Addr string

// Network implements net.Addr.
func (Addr) Network() string { return "memnet" }

func (a Addr) String() string { return string(a) }
