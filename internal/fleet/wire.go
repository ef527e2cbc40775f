package fleet

import (
	"net"
	"sync"
	"sync/atomic"
)

// countingListener counts every byte of the agents' connections as they
// cross the socket: TLS records and handshakes, HTTP/2 frames and
// settings, gRPC message headers, clock probes and heartbeats, session
// control and the window reports. Only TCP/IP headers and
// retransmissions lie below it. It also bounds the connections open at
// once: one past the bound is closed as it arrives and told to full,
// so a flood of connections costs neither goroutines nor memory.
type countingListener struct {
	net.Listener
	in, out *atomic.Int64
	slots   chan struct{}
	full    func(addr string)
}

func (l countingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &countingConn{Conn: c, in: l.in, out: l.out, slots: l.slots}, nil
		default:
			addr := c.RemoteAddr().String()
			c.Close()
			l.full(addr)
		}
	}
}

type countingConn struct {
	net.Conn
	in, out *atomic.Int64
	slots   chan struct{}
	once    sync.Once
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.in.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.out.Add(int64(n))
	return n, err
}

// Close frees the connection's slot, once however often it is closed.
func (c *countingConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}
