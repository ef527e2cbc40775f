package fleet

import (
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// pipeConn is one end of a pipe that says it comes from host.
type pipeConn struct {
	net.Conn
	addr net.Addr
}

func (c pipeConn) RemoteAddr() net.Addr { return c.addr }

func newPipe(t *testing.T, host string) (server net.Conn, closed func() bool) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return pipeConn{a, &net.TCPAddr{IP: net.ParseIP(host), Port: 40000}}, func() bool {
		// The peer's read fails at once on a closed pipe; on an open
		// one it waits for the deadline, already passed.
		_ = b.SetReadDeadline(time.Unix(0, 0))
		_, err := b.Read(make([]byte, 1))
		return err != nil && !isTimeout(err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestVictim(t *testing.T) {
	c := func(host string, refused bool) *doorConn { return &doorConn{host: host, refused: refused} }
	for _, tc := range []struct {
		name    string
		waiting []*doorConn
		want    int
	}{
		{"the oldest refused a stream first", []*doorConn{c("a", false), c("b", false), c("b", true), c("a", true)}, 2},
		{"else the host holding most, its oldest", []*doorConn{c("a", false), c("b", false), c("b", false), c("a", false), c("b", false)}, 1},
		{"a tie: the host that reached it first", []*doorConn{c("a", false), c("b", false), c("b", false), c("a", false)}, 1},
		{"one host: its oldest", []*doorConn{c("a", false), c("a", false)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := victim(tc.waiting); got != tc.want {
				t.Errorf("victim = %d, want %d", got, tc.want)
			}
		})
	}
}

// The door's rules, one by one: a full room closes one to let the next
// in (an agent's connection on another host is never the one); a
// refused stream ends its connection after refusedGrace; an unproved
// connection ends at the prove deadline; a proved one stays, and the
// agents' own room has a bound.
func TestDoor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var evicted []string
		d := &door{strangers: 3, agents: 1, deadline: 20 * time.Second, evicted: func(addr string) { evicted = append(evicted, addr) }}
		agentRaw, agentClosed := newPipe(t, "10.0.0.1")
		agent := d.admit(agentRaw)
		var flood []func() bool
		for range 5 {
			raw, closed := newPipe(t, "10.0.0.9")
			d.admit(raw)
			flood = append(flood, closed)
		}
		// Room for 3: the flood's oldest three were closed, the agent's
		// connection and the flood's newest two stay.
		if agentClosed() || !flood[0]() || !flood[1]() || !flood[2]() || flood[3]() || flood[4]() {
			t.Errorf("after the flood: agent closed %v, flood closed %v %v %v %v %v", agentClosed(), flood[0](), flood[1](), flood[2](), flood[3](), flood[4]())
		}
		if len(evicted) != 3 || evicted[0] != "10.0.0.9:40000" {
			t.Errorf("evicted %q", evicted)
		}
		if why := d.prove(agent); why != "" {
			t.Fatalf("prove: %s", why)
		}
		// A second agent's connection finds the agents' room full.
		otherRaw, _ := newPipe(t, "10.0.0.2")
		if why := d.prove(d.admit(otherRaw)); why != "1 agents' connections are open already (the coordinator's limit)" {
			t.Errorf("a second agent: %q", why)
		}
		// A refused stream: its connection ends after the grace, not
		// before.
		raw, closed := newPipe(t, "10.0.0.9")
		stranger := d.admit(raw)
		d.refuse(stranger)
		time.Sleep(refusedGrace - time.Millisecond)
		synctest.Wait()
		if closed() {
			t.Error("a refused connection closed before the grace")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !closed() {
			t.Error("a refused connection open after the grace")
		}
		// Past the prove deadline only the proved connection is left.
		time.Sleep(20 * time.Second)
		synctest.Wait()
		d.mu.Lock()
		left, inside := len(d.waiting), d.inside
		d.mu.Unlock()
		if left != 0 || inside != 1 || agentClosed() {
			t.Errorf("after the deadline: %d unproved, %d proved, agent closed %v", left, inside, agentClosed())
		}
		agent.Close()
		agent.Close()
		d.mu.Lock()
		inside = d.inside
		d.mu.Unlock()
		if inside != 0 {
			t.Errorf("%d proved after the agent left", inside)
		}
	})
}

// A flood on the agent's own host that closes the agent's connection
// before its stream is read: proving it then says so (evictedWhy, which
// the coordinator sends as Unavailable so the agent dials again).
func TestDoorEvictedBeforeProof(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &door{strangers: 2, agents: 1, deadline: 20 * time.Second, evicted: func(string) {}}
		agentRaw, agentClosed := newPipe(t, "10.0.0.1")
		agent := d.admit(agentRaw)
		for range 2 {
			raw, _ := newPipe(t, "10.0.0.1")
			d.admit(raw)
		}
		if !agentClosed() {
			t.Fatal("the agent's connection, the host's oldest, stayed open")
		}
		if why := d.prove(agent); why != evictedWhy {
			t.Errorf("prove after eviction: %q, want %q", why, evictedWhy)
		}
	})
}
