package fleet

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// door decides who may hold a connection to the coordinator. Anyone who
// reaches the port gets in; only a peer that proves itself (the token
// on a stream, or mutual TLS alone) may stay. A connection is a
// stranger's until then, and strangers can hold nothing for long:
//
//   - the first stream refused for its token closes the connection
//     (after refusedGrace, so the refusal reaches the peer): a refused
//     stream cannot keep a connection alive, however often it comes;
//   - a connection that has not proved itself within limits.prove is
//     closed;
//   - when limits.strangers unproved connections are open, a new one is
//     not turned away (that would let whoever holds the room keep the
//     agents out): it takes the place of one already in. The one closed
//     is a connection refused a stream if there is one, else one of the
//     host holding the most unproved connections, its oldest.
//
// So a flood from one host never closes an agent's connection from
// another (the flood's host always holds more), and on the agent's own
// host a flood must open limits.strangers connections, none of them
// refused yet, in the time the agent takes to send its first stream.
// Proved connections are the agents': at most limits.agentConns, past
// which a stream with the token is refused as too many.
type door struct {
	strangers, agents int           // limits.strangers, limits.agentConns
	deadline          time.Duration // limits.prove: an unproved connection's life
	// evicted hears of a connection closed to make room.
	evicted func(addr string)

	mu      sync.Mutex
	waiting []*doorConn // unproved, oldest first
	inside  int         // proved connections open
}

// refusedGrace is how long a connection refused a stream stays open:
// long enough for the refusal to be written, too short to hold a slot.
const refusedGrace = time.Second

// doorConn is a connection as the door sees it. Its RemoteAddr carries
// it (doorAddr), so a stream's handler finds its connection through the
// stream's peer address.
type doorConn struct {
	net.Conn
	door    *door
	host    string
	refused bool // a stream on it was refused for its token
	proved  bool
	gone    bool
	timer   *time.Timer
	once    sync.Once
}

// doorAddr is a peer's address that knows its connection.
type doorAddr struct {
	net.Addr
	conn *doorConn
}

func (c *doorConn) RemoteAddr() net.Addr { return doorAddr{c.Conn.RemoteAddr(), c} }

// Close closes the connection and gives up its place, once.
func (c *doorConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.door.leave(c))
	return err
}

// admit takes a new connection in, closing another if the room is full.
func (d *door) admit(raw net.Conn) *doorConn {
	c := &doorConn{Conn: raw, door: d, host: hostOf(raw.RemoteAddr().String())}
	d.mu.Lock()
	var out *doorConn
	if len(d.waiting) >= d.strangers {
		i := victim(d.waiting)
		out = d.waiting[i]
		d.waiting = append(d.waiting[:i], d.waiting[i+1:]...)
		out.gone = true
	}
	d.waiting = append(d.waiting, c)
	c.timer = time.AfterFunc(d.deadline, func() { d.expire(c) })
	d.mu.Unlock()
	if out != nil {
		out.Close()
		d.evicted(out.Conn.RemoteAddr().String())
	}
	return c
}

// victim is the index in waiting (oldest first, never empty) of the
// connection to close for a newcomer: the oldest refused a stream, else
// the oldest of the host holding the most.
func victim(waiting []*doorConn) int {
	for i, c := range waiting {
		if c.refused {
			return i
		}
	}
	count := map[string]int{}
	most := ""
	for _, c := range waiting {
		count[c.host]++
		if count[c.host] > count[most] {
			most = c.host
		}
	}
	for i, c := range waiting {
		if c.host == most {
			return i
		}
	}
	return 0
}

// leave forgets c; it returns the func Close runs once.
func (d *door) leave(c *doorConn) func() {
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if c.timer != nil {
			c.timer.Stop()
		}
		switch {
		case c.proved:
			d.inside--
		case !c.gone:
			d.drop(c)
		}
		c.gone = true
	}
}

// drop removes c from waiting; d.mu held.
func (d *door) drop(c *doorConn) {
	for i, w := range d.waiting {
		if w == c {
			d.waiting = append(d.waiting[:i], d.waiting[i+1:]...)
			return
		}
	}
}

// expire closes c if it has not proved itself by now.
func (d *door) expire(c *doorConn) {
	d.mu.Lock()
	stale := !c.proved && !c.gone
	d.mu.Unlock()
	if stale {
		c.Close()
	}
}

// connOf is the door's connection behind a stream's peer address; nil
// for one the door did not admit.
func connOf(addr net.Addr) *doorConn {
	if a, ok := addr.(doorAddr); ok {
		return a.conn
	}
	return nil
}

// evictedWhy is prove's answer for a connection closed to make room
// before its stream was read: the peer is told its connection is gone
// (Unavailable), which an agent answers by dialling again.
const evictedWhy = "its connection was closed to make room before its stream was read"

// prove marks c as an agent's. It reports why not, leaving c a
// stranger's: limits.agentConns agents' connections are open, or c was
// closed to make room before its stream was read (evictedWhy).
func (d *door) prove(c *doorConn) (why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case c.proved:
		return ""
	case c.gone:
		return evictedWhy
	case d.inside >= d.agents:
		return fmt.Sprintf("%d agents' connections are open already (the coordinator's limit)", d.agents)
	}
	c.proved, c.refused = true, false
	c.timer.Stop()
	d.drop(c)
	d.inside++
	return ""
}

// refuse marks c as refused a stream for its token and closes it after
// refusedGrace, unless a stream on it proved itself meanwhile.
func (d *door) refuse(c *doorConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.proved || c.gone || c.refused {
		return
	}
	c.refused = true
	c.timer.Stop()
	c.timer = time.AfterFunc(refusedGrace, func() { d.expire(c) })
}
