package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestListenDialEcho(t *testing.T) {
	var n Network
	ln, err := n.Listen(context.Background(), "tcp", "server:8000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Listen(context.Background(), "tcp", "server:8000"); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("second Listen on the name = %v, want EADDRINUSE", err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		if c.LocalAddr().String() != "server:8000" {
			done <- errors.New("server side names " + c.LocalAddr().String())
			return
		}
		_, err = io.Copy(c, c)
		done <- err
	}()
	c, err := n.Dial(context.Background(), "tcp", "server:8000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if _, err := n.Dial(context.Background(), "tcp", "server:8000"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial after Close = %v, want ECONNREFUSED", err)
	}
	if _, err := n.Dial(context.Background(), "tcp", "nobody:1"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial of an unknown name = %v, want ECONNREFUSED", err)
	}
}

// staleConn times out its first reads whatever the deadline, as bufconn
// does when a timer armed for an earlier, since-cleared deadline fires.
type staleConn struct {
	net.Conn
	timeouts int
}

func (s *staleConn) Read(b []byte) (int, error) {
	if s.timeouts > 0 {
		s.timeouts--
		return 0, os.ErrDeadlineExceeded
	}
	return copy(b, "data"), nil
}

func (s *staleConn) SetReadDeadline(time.Time) error { return nil }

func TestStaleTimeoutIsRetried(t *testing.T) {
	c := &conn{Conn: &staleConn{timeouts: 2}}
	buf := make([]byte, 4)
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "data" {
		t.Fatalf("read with no deadline = %q, %v; want the data", buf[:n], err)
	}
	// A deadline that has passed explains the timeout: it is returned.
	c = &conn{Conn: &staleConn{timeouts: 1}}
	c.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline = %v, want a timeout", err)
	}
}

// Inside a synctest bubble, a deadline already past, set while a read
// waits (what net/http does to end a connection's background read after
// every request), ends that read with a timeout; a cleared deadline then
// lets the next read through.
func TestPastDeadlineInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n Network
		ln, err := n.Listen(context.Background(), "tcp", "server:1")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		c, err := n.Dial(context.Background(), "tcp", "server:1")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		srv := <-accepted
		defer srv.Close()
		for i := range 200 {
			read := make(chan error, 1)
			go func() {
				_, err := c.Read(make([]byte, 1))
				read <- err
			}()
			synctest.Wait() // the read is waiting
			c.SetReadDeadline(time.Unix(1, 0))
			var ne net.Error
			if err := <-read; !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("round %d: read = %v, want a timeout", i, err)
			}
			c.SetReadDeadline(time.Time{})
			srv.Write([]byte{byte(i)})
			b := make([]byte, 1)
			if _, err := c.Read(b); err != nil || b[0] != byte(i) {
				t.Fatalf("round %d: read after clearing = %v %v", i, b, err)
			}
		}
	})
}

// bufconn never gets a deadline already past (see armable): one a
// nanosecond ahead instead, so no timer is due the moment it is armed.
func TestArmable(t *testing.T) {
	now := time.Now()
	future := now.Add(time.Hour)
	if got := armable(time.Time{}); !got.IsZero() {
		t.Errorf("no deadline became %v", got)
	}
	if got := armable(future); !got.Equal(future) {
		t.Errorf("a future deadline became %v", got)
	}
	for _, past := range []time.Time{time.Unix(1, 0), now.Add(-time.Millisecond)} {
		if got := armable(past); !got.After(now) {
			t.Errorf("past deadline %v armed at %v, not after now", past, got)
		}
	}
}
