package fleet

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// The agent's connection ends as it opens its stream, before the
// coordinator has read a byte of it: what the door does to an unproved
// connection when a stranger's flood on the agent's host needs its
// place. The agent dials again and joins. (Before, it gave up with
// "joining the coordinator: … Unavailable … EOF", which is how a flood
// kept agents out on a busy machine.)
func TestAgentRejoinsAConnectionLostWhileJoining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memNet()
		c, err := Listen(CoordinatorOptions{Agents: 1, Listen: testAddr, Token: "secret", Version: "v1", Plan: &plan.Plan{},
			Net: n, Wait: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var mu sync.Mutex
		dials, cuts := 0, 0
		agentNet := &kinds.Net{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := n.Dial(ctx, network, addr)
			mu.Lock()
			defer mu.Unlock()
			dials++
			if err != nil || dials > 1 {
				return conn, err
			}
			return &cutAtStream{Conn: conn, cut: func() { mu.Lock(); cuts++; mu.Unlock() }}, nil
		}}
		errs := make(chan error, 1)
		go func() {
			errs <- RunAgent(t.Context(), AgentOptions{Coordinator: testAddr, Index: 0, Name: "a", Token: "secret", Version: "v1",
				Plan: &plan.Plan{}, Net: agentNet, JoinTimeout: 30 * time.Second,
				Open: func(context.Context) (map[string]kinds.Server, func(), error) { return nil, func() {}, nil }})
		}()
		ready := make(chan error, 1)
		go func() { ready <- c.WaitReady(t.Context()) }()
		select {
		case err := <-ready:
			if err != nil {
				t.Fatalf("WaitReady: %v", err)
			}
		case err := <-errs:
			t.Fatalf("the agent gave up: %v", err)
		}
		c.Finish("done", 0)
		if err := <-errs; err != nil {
			t.Fatalf("agent: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if cuts != 1 || dials < 2 {
			t.Fatalf("%d connection(s) cut, %d dial(s): the test did not cut the first connection's stream", cuts, dials)
		}
	})
}

// cutAtStream is a client's connection that closes instead of writing
// the first HTTP/2 HEADERS frame (the first stream's), so the server
// never sees the stream. It follows the frames the client writes: the
// preface, then 9-byte frame headers and their payloads.
type cutAtStream struct {
	net.Conn
	cut     func()
	pending []byte // bytes written, not yet parsed
	skip    int    // payload bytes still to pass
	preface bool   // the client preface has passed
	closed  bool
}

func (c *cutAtStream) Write(b []byte) (int, error) {
	if c.closed {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, b...)
	for {
		if c.skip > 0 {
			k := min(c.skip, len(c.pending))
			c.pending, c.skip = c.pending[k:], c.skip-k
		}
		if !c.preface {
			if len(c.pending) < len(http2.ClientPreface) {
				break
			}
			c.pending, c.preface = c.pending[len(http2.ClientPreface):], true
			continue
		}
		if c.skip > 0 || len(c.pending) < 9 {
			break
		}
		if http2.FrameType(c.pending[3]) == http2.FrameHeaders {
			c.closed = true
			c.cut()
			c.Conn.Close()
			return 0, errors.New("connection closed to make room")
		}
		c.skip = int(c.pending[0])<<16 | int(c.pending[1])<<8 | int(c.pending[2])
		c.pending = c.pending[9:]
	}
	return c.Conn.Write(b)
}
