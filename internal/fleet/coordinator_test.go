package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/runner/plan"
)

const testAddr = "coordinator:7700"

// memNet is an in-memory network whose connections hold small buffers:
// the tests below open many.
func memNet() *kinds.Net {
	n := &memnet.Network{Buffer: 16 << 10}
	return &kinds.Net{Listen: n.Listen, Dial: n.Dial}
}

// peerConn is a gRPC client of the coordinator that says whatever a test
// makes it say.
func peerConn(t *testing.T, n *kinds.Net) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+testAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return n.Dial(ctx, "tcp", addr) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// join opens a Join stream with token (none when "").
func join(ctx context.Context, conn *grpc.ClientConn, token string) (fleetpb.Fleet_JoinClient, error) {
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, authKey, "Bearer "+token)
	}
	return fleetpb.NewFleetClient(conn).Join(ctx)
}

// drain reads a stream to its end: the refusal, if any, and its status.
func drain(s fleetpb.Fleet_JoinClient) (refusal string, err error) {
	for {
		msg, err := s.Recv()
		if err != nil {
			return refusal, err
		}
		if r := msg.GetRefusal(); r != nil {
			refusal = r.Reason
		}
	}
}

func hello(name, version string) *fleetpb.AgentMessage {
	return &fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Hello{Hello: &fleetpb.Hello{Name: name, Index: -1, Version: version}}}
}

// A run that misses an agent is "could not measure" (exit 3) whoever
// knocked without the token meanwhile: a stranger is not the scenario's
// fault. A peer with the token whose setup is wrong (another version)
// is the deployment's mistake: exit 2.
func TestRefusalsAndTheRunsExit(t *testing.T) {
	cases := []struct {
		name  string
		token string
		tls   bool
		want  failure.Kind
	}{
		{name: "nobody knocked", want: failure.Environment},
		{name: "no token", token: "-", want: failure.Environment},
		{name: "wrong token", token: "guess", want: failure.Environment},
		{name: "token, other version", token: "secret", want: failure.InvalidInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := memNet()
				var log strings.Builder
				var mu sync.Mutex
				c, err := Listen(CoordinatorOptions{Agents: 1, Listen: testAddr, Token: "secret", Version: "v1",
					Wait: 5 * time.Second, Net: n, Log: lockedWriter{&mu, &log}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if tc.token != "" {
					token := strings.TrimPrefix(tc.token, "-")
					err := RunAgent(t.Context(), AgentOptions{Coordinator: testAddr, Index: -1, Name: "knock", Token: token,
						Version: "v0-other", Plan: &plan.Plan{}, Net: n, JoinTimeout: time.Second})
					// The knocking agent's own setup is wrong: exit 2 for
					// it, whatever it means for the run.
					if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "refused this agent") {
						t.Fatalf("agent: %v", err)
					}
				}
				err = c.WaitReady(t.Context())
				if err == nil || failure.KindOf(err) != tc.want || !strings.Contains(err.Error(), "0 of 1 agent(s) ready after 5s") {
					t.Fatalf("WaitReady: %v (kind %v), want kind %v", err, failure.KindOf(err), tc.want)
				}
				if tc.token != "" && !strings.Contains(err.Error(), "refused") {
					t.Errorf("the refusal is not named: %v", err)
				}
			})
		})
	}
}

// Wrong tokens with huge names: the coordinator reads nothing of a
// stream without the token, so nothing of the name is kept, logged or
// noted; the refusals of one host are counted, not repeated.
func TestStrangersCostACounter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memNet()
		var log strings.Builder
		var mu sync.Mutex
		c, err := Listen(CoordinatorOptions{Agents: 1, Listen: testAddr, Token: "secret", Version: "v1",
			Net: n, Log: lockedWriter{&mu, &log}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conn := peerConn(t, n)
		const knocks = 20
		for i := range knocks {
			s, err := join(t.Context(), conn, fmt.Sprintf("guess-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%d\nperfscen: all 1 agent(s) ready\n%s", i, strings.Repeat("x", 1<<20-64))
			// io.EOF: the coordinator ended the stream before reading it.
			if err := s.Send(hello(name, "v1")); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if refusal, err := drain(s); refusal != "wrong token" || status.Code(err) != codes.PermissionDenied {
				t.Fatalf("knock %d: refusal %q, %v", i, refusal, err)
			}
		}
		refused := c.Refused()
		if len(refused) != 1 || refused[0] != fmt.Sprintf("an agent from client: wrong token (%d times)", knocks) {
			t.Errorf("refused %q", refused)
		}
		mu.Lock()
		defer mu.Unlock()
		// Logged at the 1st, 2nd, 4th, 8th and 16th knock.
		if got := strings.Count(log.String(), "\n"); got != 5 || len(log.String()) > 1024 || strings.Contains(log.String(), "all 1 agent(s) ready") {
			t.Errorf("%d log lines, %d bytes:\n%.2000s", got, len(log.String()), log.String())
		}
	})
}
