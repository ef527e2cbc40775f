package fleet

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// A stranger floods the coordinator, over real TCP on the agents' own
// host, with HTTP/2 connections that open a stream without the token
// and then hold on, dialling again whenever one is closed: more
// connections than the coordinator keeps open for anyone. Agents that
// hold the token join during the flood all the same. (Before the door,
// the flood held every slot and the agents gave up with "could not
// reach the coordinator".)
func TestAgentsJoinDuringAFlood(t *testing.T) {
	const agents = 2
	c, err := Listen(CoordinatorOptions{Agents: agents, Listen: "127.0.0.1:0", Token: "secret", Version: "v1", Plan: &plan.Plan{},
		Wait: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.Addr()
	lim := defaultLimits(agents)
	flooders := 2 * (lim.strangers + lim.agentConns)

	ctx, cancel := context.WithCancel(t.Context())
	var flood sync.WaitGroup
	var started sync.WaitGroup
	started.Add(flooders)
	for range flooders {
		flood.Go(func() {
			first := true
			for ctx.Err() == nil {
				var d net.Dialer
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err == nil {
					stop := context.AfterFunc(ctx, func() { conn.Close() })
					_, _ = conn.Write(h2("", -1))
					if first {
						started.Done()
						first = false
					}
					// Hold the connection until the coordinator ends it.
					_, _ = io.Copy(io.Discard, conn)
					stop()
					conn.Close()
				} else if first && ctx.Err() != nil {
					started.Done()
					first = false
				}
			}
			if first {
				started.Done()
			}
		})
	}
	// Every flooder has a connection in, or had one closed: the room is
	// full before the first agent dials.
	started.Wait()

	errs := make(chan error, agents)
	for i := range agents {
		go func() {
			errs <- RunAgent(ctx, AgentOptions{Coordinator: addr, Index: i, Name: "a", Token: "secret", Version: "v1",
				Plan: &plan.Plan{}, JoinTimeout: 30 * time.Second, Open: func(context.Context) (map[string]kinds.Server, func(), error) {
					return nil, func() {}, nil
				}})
		}()
	}
	ready := make(chan error, 1)
	go func() { ready <- c.WaitReady(ctx) }()
	var failed error
	select {
	case failed = <-ready:
	case failed = <-errs:
		if failed == nil {
			failed = <-ready
		}
	}
	if failed != nil {
		cancel()
		flood.Wait()
		t.Fatalf("agents during the flood: %v", failed)
	}
	// The flood was there, and refused.
	refused := strings.Join(c.Refused(), "\n")
	if !strings.Contains(refused, "no token") {
		t.Errorf("the flood was not refused:\n%s", refused)
	}
	c.Finish("done", 0)
	for range agents {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	cancel()
	flood.Wait()
}
