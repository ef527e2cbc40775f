//go:build linux

package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// alwaysBlocking converts every own connection for the rest of the test.
func alwaysBlocking(t *testing.T) {
	t.Helper()
	blockingAlways.Store(true)
	t.Cleanup(func() { blockingAlways.Store(false) })
}

// The tests of the own connections, run again with every connection in
// blocking mode: the same wire behaviour, timeouts, cancellation, TLS,
// large writes and server closes.
func TestOwnConnsBlocking(t *testing.T) {
	alwaysBlocking(t)
	before := blockingOpened.Load()
	for name, test := range map[string]func(*testing.T){
		"http request and reply":  TestHTTPConnRequestAndReply,
		"http reply framings":     TestHTTPConnReplyFramings,
		"http malformed replies":  TestHTTPConnMalformedReplies,
		"http timeout and cancel": TestHTTPConnTimeoutAndCancel,
		"http server closes":      TestHTTPConnServerClosesIdle,
		"http tls":                TestHTTPConnTLS,
		"grpc call":               TestGRPCConnCall,
		"grpc statuses":           TestGRPCConnStatuses,
		"grpc message limits":     TestGRPCConnMessageLimits,
		"grpc deadline":           TestGRPCConnDeadline,
		"late interrupt":          TestOwnConnLateInterrupt,
	} {
		t.Run(name, test)
	}
	if blockingOpened.Load() == before {
		t.Fatal("no connection was put in blocking mode")
	}
	if n := blockingSlots.Load(); n != 0 {
		t.Errorf("%d blocking slots still taken after every connection closed", n)
	}
}

// loopbackPair returns a converted client connection and the server's end.
func loopbackPair(t *testing.T) (*blockingConn, net.Conn) {
	t.Helper()
	alwaysBlocking(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	nc, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	bc, ok := blockingTCP(nc, 0).(*blockingConn)
	if !ok {
		t.Fatal("the TCP connection was not converted")
	}
	t.Cleanup(func() { bc.Close() })
	srv, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { srv.Close() })
	if bc.LocalAddr().String() != srv.RemoteAddr().String() || bc.RemoteAddr().String() != srv.LocalAddr().String() {
		t.Errorf("addresses %v -> %v, server sees %v -> %v", bc.LocalAddr(), bc.RemoteAddr(), srv.RemoteAddr(), srv.LocalAddr())
	}
	return bc, srv
}

func isDeadline(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

func TestBlockingConnDeadlines(t *testing.T) {
	t.Run("expires while waiting", func(t *testing.T) {
		bc, _ := loopbackPair(t)
		bc.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := bc.Read(make([]byte, 8)); !isDeadline(err) {
			t.Fatalf("read: got %v, want a timeout with os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("a nearer deadline re-arms the socket", func(t *testing.T) {
		bc, _ := loopbackPair(t)
		bc.SetDeadline(time.Now().Add(time.Hour))
		if bc.armed <= 0 || bc.armed > 30*time.Minute {
			t.Fatalf("armed %v for a deadline an hour away, want half of it", bc.armed)
		}
		bc.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if bc.armed > 20*time.Millisecond {
			t.Fatalf("armed %v for a deadline 20ms away: the wait would outlast it", bc.armed)
		}
		armed := bc.armed
		bc.SetDeadline(time.Now().Add(time.Hour))
		if bc.armed != armed {
			t.Errorf("a later deadline re-armed the socket (%v -> %v); it needs no system call", armed, bc.armed)
		}
		bc.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := bc.Read(make([]byte, 8)); !isDeadline(err) {
			t.Fatalf("read: got %v, want a timeout", err)
		}
	})
	t.Run("a timeout before the deadline keeps waiting", func(t *testing.T) {
		bc, srv := loopbackPair(t)
		bc.SetDeadline(time.Now().Add(time.Hour))
		bc.mu.Lock()
		bc.arm(time.Millisecond) // fires long before the reply can come
		bc.mu.Unlock()
		go func() {
			var b [1]byte
			if _, err := io.ReadFull(srv, b[:]); err == nil {
				srv.Write([]byte("reply"))
			}
		}()
		if _, err := bc.Write([]byte("?")); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 5)
		if _, err := io.ReadFull(bc, got); err != nil || string(got) != "reply" {
			t.Fatalf("read %q, %v; want the reply", got, err)
		}
		// The same decision without a race against the reply: a socket
		// timeout with the deadline ahead is waited through, re-armed.
		eagain := &os.PathError{Op: "read", Path: "tcp", Err: syscall.EAGAIN}
		bc.SetDeadline(time.Now().Add(time.Hour))
		if err := bc.failed("read", eagain); err != nil {
			t.Fatalf("timeout an hour before the deadline: %v, want to keep waiting", err)
		}
		if bc.armed < 30*time.Minute {
			t.Errorf("re-armed for %v, want what is left of the hour", bc.armed)
		}
		bc.deadline = time.Now().Add(-time.Millisecond)
		if err := bc.failed("read", eagain); !isDeadline(err) {
			t.Fatalf("timeout after the deadline: %v, want a deadline error", err)
		}
	})
	t.Run("no deadline", func(t *testing.T) {
		bc, srv := loopbackPair(t)
		bc.SetDeadline(time.Now().Add(time.Millisecond))
		bc.SetDeadline(time.Time{})
		go func() {
			var b [1]byte
			if _, err := io.ReadFull(srv, b[:]); err == nil {
				srv.Write([]byte("ok"))
			}
		}()
		bc.Write([]byte("?"))
		got := make([]byte, 2)
		if _, err := io.ReadFull(bc, got); err != nil || string(got) != "ok" {
			t.Fatalf("read %q, %v", got, err)
		}
	})
	t.Run("a past deadline interrupts a blocked read for good", func(t *testing.T) {
		bc, _ := loopbackPair(t)
		done := make(chan error)
		go func() {
			_, err := bc.Read(make([]byte, 8))
			done <- err
		}()
		bc.SetDeadline(aLongTimeAgo)
		if err := <-done; !isDeadline(err) {
			t.Fatalf("read: got %v, want a timeout", err)
		}
		bc.SetDeadline(time.Now().Add(time.Hour))
		if _, err := bc.Write([]byte("x")); !isDeadline(err) {
			t.Fatalf("write after: got %v, want a timeout (the socket is shut down)", err)
		}
	})
	t.Run("close wakes a blocked read", func(t *testing.T) {
		bc, _ := loopbackPair(t)
		done := make(chan error)
		go func() {
			_, err := bc.Read(make([]byte, 8))
			done <- err
		}()
		bc.Close()
		if err := <-done; err == nil {
			t.Fatal("read after close succeeded")
		}
		if err := bc.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second close: %v, want net.ErrClosed", err)
		}
	})
}

func TestBlockingConnPeerCloses(t *testing.T) {
	t.Run("EOF", func(t *testing.T) {
		bc, srv := loopbackPair(t)
		srv.Write([]byte("ab"))
		srv.Close()
		got, err := io.ReadAll(bc)
		if err != nil || string(got) != "ab" {
			t.Fatalf("read %q, %v; want \"ab\" then EOF", got, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		bc, srv := loopbackPair(t)
		srv.(*net.TCPConn).SetLinger(0) // close sends RST
		srv.Close()
		_, err := bc.Read(make([]byte, 8))
		var oe *net.OpError
		if !isConnReset(err) || !errors.As(err, &oe) || !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read: got %v (%T), want a *net.OpError with ECONNRESET", err, err)
		}
		if want := "read tcp " + bc.LocalAddr().String() + "->" + bc.RemoteAddr().String(); err.Error()[:len(want)] != want {
			t.Errorf("error %q does not begin %q as the poller's connections' errors do", err, want)
		}
	})
}

// WriteBuffers sends every byte of many buffers in order, across the
// partial writes a full socket buffer forces.
func TestBlockingConnWriteBuffers(t *testing.T) {
	bc, srv := loopbackPair(t)
	var bufs [][]byte
	var want []byte
	for i := range 12 {
		b := bytes.Repeat([]byte{byte(i)}, 1+i*60_000)
		bufs = append(bufs, b, nil)
		want = append(want, b...)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(srv, int64(len(want))))
		got <- b
	}()
	n, err := bc.WriteBuffers(bufs)
	if err != nil || n != int64(len(want)) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(want), err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the server read %d bytes that differ from the %d written", len(b), len(want))
	}
}

// At most GOMAXPROCS-1 connections block at once, so one P is always free
// for the run's other goroutines; a closed connection gives its slot back.
func TestBlockingSlots(t *testing.T) {
	addr := serveLoopback(t, func(c net.Conn) {
		io.Copy(io.Discard, c) // until the client closes
		c.Close()
	})
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c := blockingTCP(nc, 0)
		t.Cleanup(func() { c.Close() })
		return c
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	if n := blockingSlots.Load(); n != 0 {
		t.Fatalf("%d slots held before the test: a connection of an earlier test was never closed", n)
	}
	a, b, c := dial(), dial(), dial()
	if _, ok := a.(*blockingConn); !ok {
		t.Fatalf("first connection: %T, want *blockingConn", a)
	}
	if _, ok := b.(*blockingConn); !ok {
		t.Fatalf("second connection: %T, want *blockingConn", b)
	}
	if _, ok := c.(*net.TCPConn); !ok {
		t.Fatalf("third connection with GOMAXPROCS 3: %T, want *net.TCPConn", c)
	}
	a.Close()
	if d := dial(); func() bool { _, ok := d.(*blockingConn); return !ok }() {
		t.Fatalf("after a close: %T, want *blockingConn", d)
	}
	runtime.GOMAXPROCS(1)
	b.Close()
	if e := dial(); func() bool { _, ok := e.(*net.TCPConn); return !ok }() {
		t.Fatalf("GOMAXPROCS 1: %T, want *net.TCPConn", e)
	}
}

// The tests of the own connections, run again with every connection in
// blocking mode and polling for its replies: polling changes neither what
// is read nor how deadlines, cancellation, TLS and server closes end.
func TestOwnConnsBusyPoll(t *testing.T) {
	spinAlways.Store(int64(20 * time.Millisecond))
	t.Cleanup(func() { spinAlways.Store(0) })
	TestOwnConnsBlocking(t)
}

func TestBlockingConnBusyPoll(t *testing.T) {
	// An hour of polling: a read that did not stop for the reply, the
	// deadline, a cancellation or the peer's close would hang the test.
	const spin = time.Hour
	pair := func(t *testing.T) (*blockingConn, net.Conn) {
		bc, srv := loopbackPair(t)
		bc.spin = spin
		return bc, srv
	}
	t.Run("reply waiting", func(t *testing.T) {
		bc, srv := pair(t)
		srv.Write([]byte("reply"))
		b := make([]byte, 5)
		if _, err := io.ReadFull(bc, b); err != nil || string(b) != "reply" || bc.spinOff {
			t.Fatalf("read %q, %v (polling off: %v); want \"reply\" and polling on", b, err, bc.spinOff)
		}
	})
	t.Run("reply later", func(t *testing.T) {
		bc, srv := pair(t)
		go srv.Write([]byte("later"))
		b := make([]byte, 5)
		if _, err := io.ReadFull(bc, b); err != nil || string(b) != "later" {
			t.Fatalf("read %q, %v; want \"later\"", b, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		bc, _ := pair(t)
		bc.SetDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := bc.Read(make([]byte, 8)); !isDeadline(err) {
			t.Fatalf("read: got %v, want a timeout with os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		bc, _ := pair(t)
		done := make(chan error, 1)
		go func() {
			_, err := bc.Read(make([]byte, 8))
			done <- err
		}()
		bc.SetDeadline(aLongTimeAgo) // how a cancelled context interrupts
		if err := <-done; !isDeadline(err) {
			t.Fatalf("read: got %v, want a timeout with os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("peer closes", func(t *testing.T) {
		bc, srv := pair(t)
		srv.Write([]byte("ab"))
		srv.Close()
		got, err := io.ReadAll(bc)
		if err != nil || string(got) != "ab" {
			t.Fatalf("read %q, %v; want \"ab\" then EOF", got, err)
		}
	})
	t.Run("reset", func(t *testing.T) {
		bc, srv := pair(t)
		srv.(*net.TCPConn).SetLinger(0)
		srv.Close()
		if _, err := bc.Read(make([]byte, 8)); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read: got %v, want ECONNRESET", err)
		}
	})
}
