package procacct

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// event is the counter instructions opens: the hardware instruction
// count, or a software event where a test must see the plumbing work on
// a machine without hardware counters.
type event struct {
	typ    uint32
	config uint64
	name   string
}

var instructionsEvent = event{unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS, "instructions"}

// instructions keeps one counter per thread, opened the first time the
// thread is seen and closed once it is gone. A thread's count runs from
// the opening, so the sum moves by what every counted thread retired
// between two readings. Counting stops for good, with a note, at the
// first thread the kernel refuses: a machine without hardware counters
// (most virtual machines, these test machines included) refuses them all.
type instructions struct {
	ev     event
	mu     sync.Mutex
	fds    map[int]int
	last   map[int]uint64
	sum    uint64
	refuse error
}

func newInstructions() *instructions {
	return &instructions{ev: instructionsEvent, fds: map[int]int{}, last: map[int]uint64{}}
}

// openCounter opens ev on thread tid (any CPU), counting user space only
// so an unprivileged perfscen may open it where perf_event_paranoid is 2.
func openCounter(ev event, tid int) (int, error) {
	attr := unix.PerfEventAttr{
		Type:   ev.typ,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config: ev.config,
		Bits:   unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
	}
	return unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

func readCounter(fd int) (uint64, error) {
	var b [8]byte
	n, err := unix.Read(fd, b[:])
	if err != nil {
		return 0, err
	}
	if n != 8 {
		return 0, fmt.Errorf("perf counter: read %d bytes", n)
	}
	return binary.NativeEndian.Uint64(b[:]), nil
}

// read counts the threads tids (opening counters on new ones) and
// returns the total since the first reading; ok is false once counting
// was refused.
func (c *instructions) read(tids []int) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse != nil {
		return 0, false
	}
	alive := make(map[int]bool, len(tids))
	for _, tid := range tids {
		alive[tid] = true
		fd, open := c.fds[tid]
		if !open {
			var err error
			fd, err = openCounter(c.ev, tid)
			if err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited since the listing
				}
				c.refuse = err
				c.closeLocked()
				return 0, false
			}
			c.fds[tid], c.last[tid] = fd, 0
		}
		v, err := readCounter(fd)
		if err != nil {
			continue
		}
		if v >= c.last[tid] {
			c.sum += v - c.last[tid]
		}
		c.last[tid] = v
	}
	for tid, fd := range c.fds {
		if !alive[tid] {
			unix.Close(fd)
			delete(c.fds, tid)
			delete(c.last, tid)
		}
	}
	return c.sum, true
}

// notes says once why instructions are not counted.
func (c *instructions) notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuse == nil {
		return nil
	}
	return []string{InstructionsRefused(c.refuse)}
}

// InstructionsRefused is the note for a machine that would not count
// instructions.
func InstructionsRefused(err error) string {
	why := err.Error()
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		why = "this machine has no hardware performance counters (common in virtual machines)"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		why = "perf_event_open was refused (kernel.perf_event_paranoid, or a container without CAP_PERFMON)"
	}
	return "instructions per inference are not counted: " + why + "; CPU time and work per inference are measured instead"
}

func (c *instructions) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked()
}

func (c *instructions) closeLocked() {
	for tid, fd := range c.fds {
		unix.Close(fd)
		delete(c.fds, tid)
	}
}
