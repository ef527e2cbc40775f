//go:build linux

package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// blockingConn is a caller's own TCP connection taken out of Go's network
// poller and put in blocking mode, so that waiting for a reply is one
// read(2) that sleeps in the kernel until the reply is there.
//
// At concurrency 1 a reply comes tens of microseconds after its request.
// Through the poller each such wait cost a read that fails with EAGAIN, the
// goroutine parking, the scheduler looking for other work, another thread
// woken from epoll_wait by the reply (the socket stays registered there)
// and the goroutine's wake-up on that thread: about 1.3 µs of the request's
// 10 µs of client time per syscall, and most of its context switches. A
// blocking read is what a thread-per-request client such as
// perf_analyzer does, and costs one sleep and one wake.
//
// A thread blocked in a system call keeps its P (its share of GOMAXPROCS)
// until the runtime's monitor hands the P to another thread, so at most
// GOMAXPROCS-1 connections are converted at a time (none when GOMAXPROCS
// is 1): one P is always free for the run's other goroutines, and a busy
// run with many connections keeps the poller, which wakes one thread for
// many replies.
//
// Deadlines are kept with SO_RCVTIMEO and SO_SNDTIMEO, armed at no more
// than the time left, and checked against the clock when they fire; a
// deadline in the past (how a cancelled context interrupts a caller's
// exchange) shuts the socket down, which wakes a blocked read or write at
// once. The connection is then unusable, as the owner drops it anyway.
type blockingConn struct {
	f             *os.File
	rc            syscall.RawConn // f's: holds the descriptor open while used
	local, remote net.Addr
	closeOnce     sync.Once

	lastYield time.Time

	// spin is how long a read polls the socket without sleeping before
	// it blocks (0: never); spinOff holds while replies come later than
	// that, so a slow or busy exchange does not burn the CPU in vain.
	spin    time.Duration
	spinOff bool

	mu       sync.Mutex
	deadline time.Time
	armed    time.Duration // the socket's timeouts; 0 = none
	shut     bool          // a past deadline shut the socket down
}

// blockingSlots counts the converted connections open in this process,
// blockingOpened all ever converted.
var blockingSlots atomic.Int32
var blockingOpened atomic.Int64

// blockingAlways lets tests convert every connection, whatever
// GOMAXPROCS, so that the tests of the caller's own connections can run
// over both kinds.
var blockingAlways atomic.Bool

// spinAlways, when not 0, is every converted connection's busy poll, so
// that the tests of the own connections can run polling too.
var spinAlways atomic.Int64

func takeBlockingSlot() bool {
	if blockingAlways.Load() {
		blockingSlots.Add(1)
		return true
	}
	limit := int32(runtime.GOMAXPROCS(0) - 1)
	for {
		n := blockingSlots.Load()
		if n >= limit {
			return false
		}
		if blockingSlots.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// blockingTCP returns a blocking twin of nc when nc is a plain TCP
// connection and a slot is free, and nc itself otherwise. Its reads poll
// for up to spin before they sleep.
func blockingTCP(nc net.Conn, spin time.Duration) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok || !takeBlockingSlot() {
		return nc
	}
	fd, err := dupSocket(tc)
	if err != nil {
		blockingSlots.Add(-1)
		return nc
	}
	// Every step that can fail comes before tc is closed, so a failure
	// leaves the caller the connection it dialled.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		blockingSlots.Add(-1)
		return nc
	}
	if d := spinAlways.Load(); d != 0 {
		spin = time.Duration(d)
	}
	bc := &blockingConn{local: tc.LocalAddr(), remote: tc.RemoteAddr(), spin: spin}
	bc.f = os.NewFile(uintptr(fd), "tcp") // blocking: not registered with the poller
	if bc.rc, err = bc.f.SyscallConn(); err != nil {
		unix.SetNonblock(fd, true) // the flag is the socket's: tc's again
		bc.f.Close()
		blockingSlots.Add(-1)
		return nc
	}
	// Closing tc removes the socket from the poller (EPOLL_CTL_DEL) and
	// closes its first descriptor; the socket lives on in fd.
	tc.Close()
	blockingOpened.Add(1)
	return bc
}

func dupSocket(tc *net.TCPConn) (int, error) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return fd, derr
}

// yieldEvery is how long a caller may go without passing through the
// scheduler. A goroutine that only ever blocks in system calls never
// does, and after 10 ms the runtime's monitor counts it as running too long
// and takes its P away in the middle of a read, which then costs a hand-off
// on the way out and sets the monitor polling every 20 µs again.
const yieldEvery = 5 * time.Millisecond

func (c *blockingConn) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(c.lastYield) >= yieldEvery {
		c.lastYield = now
		runtime.Gosched()
	}
	var since time.Time
	if c.spin > 0 && len(p) > 0 {
		if !c.spinOff {
			if n, done, err := c.spinRead(p); done {
				return n, err
			}
			// Not in time: this reply's wait is longer than the spin, and
			// the next reads block until one comes within it again.
			c.spinOff = true
		} else {
			since = time.Now()
		}
	}
	for {
		n, err := c.f.Read(p)
		if err == nil {
			if !since.IsZero() && time.Since(since) <= c.spin {
				c.spinOff = false
			}
			return n, nil
		}
		if err := c.failed("read", err); err != nil {
			return n, err
		}
	}
}

// spinRead polls the socket with non-blocking reads for up to c.spin.
// At concurrency 1 a reply comes tens of microseconds after its request,
// and a thread that sleeps in read(2) for it pays the kernel's wake-up
// (and, on an idle virtual CPU, the hypervisor's) on the reply's path,
// inside the latency measured. Polling spends that time on the CPU
// instead. done is false, nothing read, when the time is up: the blocking
// read then waits. An error or the end of the stream is reported here, as
// the blocking read reports it: the socket hands a pending error to one
// read only.
func (c *blockingConn) spinRead(p []byte) (n int, done bool, err error) {
	var end time.Time
	for i := 0; ; i++ {
		var rerr error
		if err := c.rc.Control(func(fd uintptr) {
			n, _, rerr = unix.Recvfrom(int(fd), p, unix.MSG_DONTWAIT)
		}); err != nil {
			return 0, false, nil
		}
		switch {
		case rerr == nil && n > 0:
			return n, true, nil
		case rerr == nil:
			return 0, true, c.failed("read", io.EOF)
		case rerr == unix.EINTR:
			continue
		case rerr != unix.EAGAIN:
			return 0, true, c.failed("read", rerr)
		}
		n = 0
		// The clock is read from the second poll on: a reply that is
		// already there costs one system call. The spin never outlasts
		// the deadline, which the blocking read then reports.
		if i == 0 {
			end = time.Now().Add(c.spin)
			c.mu.Lock()
			if !c.deadline.IsZero() && c.deadline.Before(end) {
				end = c.deadline
			}
			c.mu.Unlock()
		} else if !time.Now().Before(end) {
			return 0, false, nil
		}
	}
}

func (c *blockingConn) Write(p []byte) (int, error) {
	done := 0
	for {
		n, err := c.f.Write(p[done:])
		done += n
		if err == nil {
			return done, nil
		}
		if err := c.failed("write", err); err != nil {
			return done, err
		}
	}
}

// WriteBuffers writes bufs with writev(2), as net.Buffers does for a TCP
// connection in the poller.
func (c *blockingConn) WriteBuffers(bufs [][]byte) (int64, error) {
	var total int64
	for {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			return total, nil
		}
		var n int
		var werr error
		if err := c.rc.Control(func(fd uintptr) {
			for {
				n, werr = unix.Writev(int(fd), bufs[:min(len(bufs), 1024)])
				if werr != unix.EINTR {
					return
				}
			}
		}); err != nil {
			werr = err
		}
		if n > 0 {
			total += int64(n)
			for n > 0 {
				k := min(n, len(bufs[0]))
				bufs[0] = bufs[0][k:]
				n -= k
				if len(bufs[0]) == 0 {
					bufs = bufs[1:]
				}
			}
		}
		if werr != nil {
			if err := c.failed("write", werr); err != nil {
				return total, err
			}
		}
	}
}

// failed decides what an I/O error means: nil when a socket timeout fired
// before the deadline (the caller goes on waiting), the deadline's error
// once it has passed or the socket was shut down for it, and otherwise
// the error as the poller's connections report it.
func (c *blockingConn) failed(op string, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shut {
		return c.opError(op, os.ErrDeadlineExceeded)
	}
	if errors.Is(err, syscall.EAGAIN) {
		if c.deadline.IsZero() {
			c.arm(0)
			return nil
		}
		left := time.Until(c.deadline)
		if left < time.Microsecond {
			return c.opError(op, os.ErrDeadlineExceeded)
		}
		c.arm(left)
		return nil
	}
	if err == io.EOF {
		return err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return c.opError(op, err)
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// arm sets the socket's timeouts to d (0: none); c.mu is held.
func (c *blockingConn) arm(d time.Duration) {
	if d == c.armed {
		return
	}
	tv := unix.NsecToTimeval(int64(d))
	ok := true
	c.rc.Control(func(fd uintptr) {
		ok = unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) == nil &&
			unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) == nil
	})
	if ok {
		c.armed = d
	}
}

// SetDeadline arms the socket's timeouts only when they would outlast the
// new deadline, at half the time left: a caller sets about the same
// deadline on every request, and one setsockopt per request would cost
// what this type saves. A wait that outlasts the armed time wakes once
// early, finds the deadline still ahead and is re-armed for what is left.
func (c *blockingConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shut {
		return nil
	}
	c.deadline = t
	if t.IsZero() {
		return nil // a timeout still armed wakes the wait early, harmlessly
	}
	left := time.Until(t)
	if left <= 0 {
		c.shut = true
		c.rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
		return nil
	}
	if c.armed == 0 || c.armed > left {
		c.arm(max(left/2, time.Microsecond))
	}
	return nil
}

// isShut reports whether a past deadline shut the socket down.
func (c *blockingConn) isShut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shut
}

func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
func (c *blockingConn) LocalAddr() net.Addr                { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr               { return c.remote }

func (c *blockingConn) Close() error {
	err := net.ErrClosed
	c.closeOnce.Do(func() {
		// A read blocked in the kernel does not notice close(2); shutdown
		// wakes it.
		c.rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
		err = c.f.Close()
		blockingSlots.Add(-1)
	})
	return err
}

// ForceBlocking puts every TCP connection dialled by an own connection in
// blocking mode, whatever GOMAXPROCS, until restore is called: the tests
// of the own connections, here and in the kinds built on them, run over
// both kinds of socket with it.
func ForceBlocking() (restore func()) {
	blockingAlways.Store(true)
	return func() { blockingAlways.Store(false) }
}

// BlockingCounts reports how many connections were ever put in blocking
// mode and how many of them are open now.
func BlockingCounts() (opened int64, open int32) {
	return blockingOpened.Load(), blockingSlots.Load()
}
