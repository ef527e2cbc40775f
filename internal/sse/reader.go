package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine bounds one line of the stream; a server that never ends a
// line must not grow the client's memory without limit.
const DefaultMaxLine = 1 << 20

// ErrTruncated reports a stream that ended in the middle of an event (no
// blank line after its last field). The standard drops such an event; a
// benchmark must count it as a failure, so the reader says so.
var ErrTruncated = fmt.Errorf("event stream ended inside an event: %w", io.ErrUnexpectedEOF)

// ErrLineTooLong reports a line longer than the reader's limit.
var ErrLineTooLong = errors.New("event stream line too long")

// Event is one dispatched event. Data and Type alias the reader's buffers
// and are valid until the next call to Next.
type Event struct {
	// Type is the "event" field, empty when the event had none (the
	// standard's "message").
	Type []byte
	// Data is the "data" fields joined with "\n".
	Data []byte
	// ID is the last "id" field seen so far on the stream.
	ID []byte
}

// Reader parses events from an io.Reader. It is not safe for concurrent
// use. Its buffers are reused, so a steady stream allocates nothing.
type Reader struct {
	r       io.Reader
	buf     []byte
	lo, hi  int // unread bytes are buf[lo:hi]
	eof     bool
	err     error // sticky read error other than io.EOF
	skipLF  bool  // the previous line ended with a CR that may pair with LF
	first   bool  // nothing read yet: a BOM may follow
	maxLine int

	data    []byte
	typ     []byte
	id      []byte
	hasData bool // a data field was seen in the current event
	pending bool // some field or line of the current event was seen
}

// NewReader returns a reader with a 4 KiB initial buffer and DefaultMaxLine.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, 4096), first: true, maxLine: DefaultMaxLine}
}

// Reset makes rd read a new stream from r, keeping its buffers.
func (rd *Reader) Reset(r io.Reader) {
	*rd = Reader{r: r, buf: rd.buf, first: true, maxLine: rd.maxLine,
		data: rd.data[:0], typ: rd.typ[:0], id: rd.id[:0]}
}

// SetMaxLine changes the longest accepted line (bytes, without its ending).
func (rd *Reader) SetMaxLine(n int) { rd.maxLine = n }

// Next returns the next event. At the end of a stream whose last event was
// complete it returns io.EOF; a stream cut inside an event gives
// ErrTruncated; a failing underlying reader gives its error.
func (rd *Reader) Next() (Event, error) {
	for {
		line, err := rd.line()
		if err != nil {
			if err == io.EOF && rd.pending {
				rd.pending = false
				return Event{}, ErrTruncated
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := rd.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] != ':' {
			rd.pending = true
		}
		rd.field(line)
	}
}

// dispatch ends the current event; events without data are not dispatched.
func (rd *Reader) dispatch() (Event, bool) {
	rd.pending = false
	if !rd.hasData {
		rd.typ = rd.typ[:0]
		return Event{}, false
	}
	ev := Event{Type: rd.typ, Data: rd.data, ID: rd.id}
	rd.hasData = false
	// The next event starts empty, but the slices handed out stay valid
	// until the next call: both are overwritten only after this returns.
	rd.data = rd.data[:0]
	rd.typ = rd.typ[:0]
	return ev, true
}

func (rd *Reader) field(line []byte) {
	if line[0] == ':' {
		return // comment, often a keep-alive
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if rd.hasData {
			rd.data = append(rd.data, '\n')
		}
		rd.data = append(rd.data, value...)
		rd.hasData = true
	case "event":
		rd.typ = append(rd.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			rd.id = append(rd.id[:0], value...)
		}
	}
	// "retry" and unknown fields are ignored, as the standard says.
}

// line returns the next line without its ending; it aliases rd.buf.
func (rd *Reader) line() ([]byte, error) {
	for {
		un := rd.buf[rd.lo:rd.hi]
		if rd.first {
			if len(un) < len(bom) && !rd.eof && bytes.HasPrefix(bom, un) {
				if err := rd.fill(); err != nil {
					return nil, err
				}
				continue
			}
			rd.first = false
			if bytes.HasPrefix(un, bom) {
				rd.lo += len(bom)
				un = un[len(bom):]
			}
		}
		if rd.skipLF && len(un) > 0 {
			// CRLF split across reads: the LF belongs to the CR before it.
			rd.skipLF = false
			if un[0] == '\n' {
				rd.lo++
				un = un[1:]
			}
		}
		if i := bytes.IndexAny(un, "\r\n"); i >= 0 {
			if i > rd.maxLine {
				return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, rd.maxLine)
			}
			rd.lo += i + 1
			rd.skipLF = un[i] == '\r'
			return un[:i], nil
		}
		if rd.eof {
			if len(un) > 0 {
				// A final line without an ending never completes its
				// event; the standard drops it, a benchmark must notice.
				rd.lo = rd.hi
				if un[0] != ':' {
					rd.pending = true
				}
			}
			return nil, io.EOF
		}
		if len(un) > rd.maxLine {
			return nil, fmt.Errorf("%w (over %d bytes)", ErrLineTooLong, rd.maxLine)
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// fill reads more bytes, compacting or growing the buffer first.
func (rd *Reader) fill() error {
	if rd.err != nil {
		return rd.err
	}
	if rd.lo > 0 {
		n := copy(rd.buf, rd.buf[rd.lo:rd.hi])
		rd.lo, rd.hi = 0, n
	}
	if rd.hi == len(rd.buf) {
		nb := make([]byte, 2*len(rd.buf))
		copy(nb, rd.buf[:rd.hi])
		rd.buf = nb
	}
	for range 100 {
		n, err := rd.r.Read(rd.buf[rd.hi:])
		rd.hi += n
		if err == io.EOF {
			rd.eof = true
			return nil
		}
		if err != nil {
			rd.err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	rd.err = io.ErrNoProgress
	return rd.err
}
