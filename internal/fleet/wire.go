package fleet

import (
	"net"
	"sync/atomic"
)

// countingListener counts every byte of the agents' connections as they
// cross the socket: TLS records and handshakes, HTTP/2 frames and
// settings, gRPC message headers, clock probes and heartbeats, session
// control and the window reports. Only TCP/IP headers and
// retransmissions lie below it. Its door bounds the connections open at
// once, so a flood of connections costs neither goroutines nor memory
// and cannot keep the agents out.
type countingListener struct {
	net.Listener
	in, out *atomic.Int64
	door    *door
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.door.admit(&countingConn{Conn: c, in: l.in, out: l.out}), nil
}

type countingConn struct {
	net.Conn
	in, out *atomic.Int64
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
