package memnet

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
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
