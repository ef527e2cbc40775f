package fleet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/fleet/fleetpb"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// serverGoroutines counts the goroutines serving the coordinator: its
// gRPC server's (connections, transports, keepalives, handlers) and the
// fleet handler's own. Clients' goroutines, the test's, are not counted.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, mark := range []string{"google.golang.org/grpc.(*Server)", "grpc/internal/transport.NewServerTransport",
			"grpc/internal/transport.(*http2Server)", "perfscen/internal/fleet.(*handler)"} {
			if strings.Contains(g, mark) {
				count++
				break
			}
		}
	}
	return count
}

// The coordinator under attack: streams without a token, silent streams
// with one, huge and malformed messages, silent connections, garbage and
// HTTP/2 peers that never open a stream. While they are at it, the
// goroutines serving them stay within what the limits allow; once the
// timeouts pass, they are back where they started, the refusals kept
// are a few kilobytes, and an agent still joins.
func TestCoordinatorUnderAttack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memNet()
		var log strings.Builder
		var mu sync.Mutex
		lim := limits{strangers: 12, agentConns: 8, prove: 20 * time.Second, joining: 4, hello: 10 * time.Second, handshake: 10 * time.Second,
			idle: 30 * time.Second, ping: 30 * time.Second, pingTimeout: 10 * time.Second}
		c, err := Listen(CoordinatorOptions{Agents: 1, Listen: testAddr, Token: "secret", Version: "v1", Plan: &plan.Plan{},
			Net: n, Log: lockedWriter{&mu, &log}, Wait: time.Hour, limits: &lim})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		synctest.Wait()
		base := serverGoroutines()
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapBase := ms.HeapAlloc

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// What the coordinator refuses at once must not wait for a
		// timeout of its own: a second of the fake clock is plenty.
		quick, cancelQuick := context.WithTimeout(ctx, time.Second)
		defer cancelQuick()
		// Streams. Without a token, 200 of them, never a word: each is
		// refused as it opens.
		var wg sync.WaitGroup
		for range 2 {
			conn := peerConn(t, n)
			for range 100 {
				wg.Go(func() {
					s, err := join(quick, conn, "")
					if err == nil {
						_, err = drain(s)
					}
					if status.Code(err) != codes.PermissionDenied {
						t.Errorf("a stream without a token: %v", err)
					}
				})
			}
		}
		wg.Wait()
		// A Hello larger than the protocol's messages, and a first
		// message that is not Hello.
		conn := peerConn(t, n)
		big, err := join(quick, conn, "secret")
		if err != nil {
			t.Fatal(err)
		}
		if err := big.Send(hello(strings.Repeat("x", 2*maxAgentMessage), "v1")); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if _, err := drain(big); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("a Hello of 2 MiB: %v", err)
		}
		odd, err := join(quick, conn, "secret")
		if err != nil {
			t.Fatal(err)
		}
		if err := odd.Send(&fleetpb.AgentMessage{Body: &fleetpb.AgentMessage_Pong{Pong: &fleetpb.Pong{}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := drain(odd); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a Pong first: %v", err)
		}
		// With the token, silent: at most lim.joining wait for their
		// Hello at once, the rest are refused.
		var silent []fleetpb.Fleet_JoinClient
		const silentConns = 6
		for range silentConns {
			conn := peerConn(t, n)
			for range maxStreamsPerConn {
				s, err := join(ctx, conn, "secret")
				if err != nil {
					t.Fatal(err)
				}
				silent = append(silent, s)
			}
		}
		synctest.Wait()
		// Each connection costs grpc-go a few goroutines (its reader,
		// writer and keepalive), each stream waiting for its Hello two.
		const perConn, perStream = 4, 2
		if got, most := serverGoroutines()-base, (3+silentConns)*perConn+lim.joining*perStream; got > most || testing.Verbose() {
			t.Errorf("%d goroutines serve the silent streams, want at most %d", got, most)
		}
		time.Sleep(lim.hello + time.Second)
		// Every silent stream has ended by now: reading them takes no
		// time.
		cut := time.Now()
		var timedOut, busy int
		for _, s := range silent {
			refusal, err := drain(s)
			switch {
			case status.Code(err) == codes.DeadlineExceeded:
				timedOut++
			case strings.Contains(refusal, "joining at once already"):
				busy++
			default:
				t.Errorf("a silent stream: %q, %v", refusal, err)
			}
		}
		if waited := time.Since(cut); waited > 0 {
			t.Errorf("silent streams still open %s after the Hello timeout", lim.hello+time.Second+waited)
		}
		if timedOut != lim.joining || busy != len(silent)-lim.joining {
			t.Errorf("%d silent streams timed out, %d refused as too many, want %d and %d", timedOut, busy, lim.joining, len(silent)-lim.joining)
		}

		// Connections: silent ones (no TLS hello, no HTTP/2 preface),
		// garbage, and HTTP/2 peers that open no stream and answer no
		// ping. Past lim.strangers each takes the place of one of them.
		var raw []net.Conn
		for i := range 3 * lim.strangers {
			r, err := n.Dial(ctx, "tcp", testAddr)
			if err != nil {
				t.Fatal(err)
			}
			raw = append(raw, r)
			switch i % 3 {
			case 1:
				_, _ = r.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x16\x03"))
			case 2:
				// The client preface and an empty SETTINGS frame.
				_, _ = r.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"))
			}
		}
		synctest.Wait()
		if got, most := serverGoroutines()-base, lim.strangers*perConn; got > most || testing.Verbose() {
			t.Errorf("%d goroutines serve %d connections, want at most %d", got, len(raw), most)
		}
		// Past every timeout: handshake, idle, ping.
		time.Sleep(lim.idle + lim.ping + lim.pingTimeout + time.Second)
		synctest.Wait()
		if got := serverGoroutines(); got > base {
			t.Errorf("%d goroutines serve the coordinator after the timeouts, %d before the attack", got, base)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		// 20 MiB and more were sent; what is kept of it is a ledger.
		if grew := int64(ms.HeapAlloc) - int64(heapBase); grew > 4<<20 {
			t.Errorf("the heap grew by %d bytes", grew)
		}
		refused := c.Refused()
		kept := 0
		for _, r := range refused {
			kept += len(r)
		}
		all := strings.Join(refused, "\n")
		for _, want := range []string{"an agent from client: no token (set PERFSCEN_AGENT_TOKEN or --token-file) (200 times)", "no Hello within 10s (4 times)",
			fmt.Sprintf("4 agents are joining at once already (the coordinator's limit) (%d times)", busy), "grpc: received message larger than max",
			"its first message was not Hello", "closed to make room: 12 connections without the token were open (the coordinator's limit)"} {
			if !strings.Contains(all, want) {
				t.Errorf("refusals lack %q:\n%s", want, all)
			}
		}
		if kept > 4<<10 {
			t.Errorf("%d bytes of refusals kept:\n%s", kept, all)
		}
		mu.Lock()
		logged := log.String()
		mu.Unlock()
		if lines := strings.Count(logged, "\n"); lines > 40 {
			t.Errorf("%d lines logged:\n%s", lines, logged)
		}

		// An agent still joins.
		agent := make(chan error, 1)
		go func() {
			agent <- RunAgent(ctx, AgentOptions{Coordinator: testAddr, Index: -1, Name: "a0", Token: "secret", Version: "v1",
				Plan: &plan.Plan{}, Net: n, Open: func(context.Context) (map[string]kinds.Server, func(), error) {
					return nil, func() {}, nil
				}})
		}()
		if err := c.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		c.Finish("done", 0)
		if err := <-agent; err != nil {
			t.Fatal(err)
		}
		for _, r := range raw {
			r.Close()
		}
	})
}

// h2 writes a client's HTTP/2 bytes: the preface, SETTINGS, a Join
// stream's HEADERS (with the given authorization, none when ""), and a
// gRPC message header claiming length bytes (none when negative).
func h2(auth string, length int64) []byte {
	var buf bytes.Buffer
	buf.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&buf, nil)
	_ = fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/perfscen.fleet.v1.Fleet/Join"},
		{":authority", testAddr}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if auth != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: authKey, Value: auth})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	if length >= 0 {
		msg := make([]byte, 5+16)
		binary.BigEndian.PutUint32(msg[1:5], uint32(length))
		_ = fr.WriteData(1, false, msg)
	}
	return buf.Bytes()
}

// Whatever bytes one peer sends — garbage, a TLS hello to a plaintext
// coordinator, HTTP/2 streams without the token, with a message header
// claiming gigabytes, or with the token and then silence — the
// coordinator ends the connection within its timeouts, keeps no
// goroutine for it and a bounded note of it.
func FuzzCoordinatorBytes(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"))
	f.Add([]byte(http2.ClientPreface))
	f.Add(h2("", -1))
	f.Add(h2("Bearer guess", 1<<31-1))
	f.Add(h2("Bearer secret", -1))
	f.Add(h2("Bearer secret", 1<<31-1))
	f.Add(h2("Bearer secret", 16))
	f.Add(append(h2("Bearer secret", 16), 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		synctest.Test(t, func(t *testing.T) {
			n := memNet()
			c, err := Listen(CoordinatorOptions{Agents: 1, Listen: testAddr, Token: "secret", Version: "v1", Plan: &plan.Plan{}, Net: n})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			synctest.Wait()
			base := serverGoroutines()
			r, err := n.Dial(t.Context(), "tcp", testAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() {
				_, _ = r.Write(b)
				// Read what the coordinator says, as a peer would,
				// until it hangs up.
				_, _ = io.Copy(io.Discard, r)
			}()
			lim := defaultLimits(1)
			time.Sleep(lim.handshake + lim.hello + lim.idle + lim.ping + lim.pingTimeout)
			synctest.Wait()
			if got := serverGoroutines(); got > base {
				t.Errorf("%d goroutines serve the coordinator after every timeout, %d before", got, base)
			}
			if testing.Verbose() {
				t.Logf("refused %q", c.Refused())
			}
			if refused := c.Refused(); len(refused) > 1 || len(strings.Join(refused, "")) > 2*maxRefusalText {
				t.Errorf("refusals: %q", refused)
			}
		})
	})
}
