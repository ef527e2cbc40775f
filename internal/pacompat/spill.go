package pacompat

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/perfscen/perfscen/internal/inputdata"
)

// spiller writes full buffers of records, each sorted, to one temporary
// file as runs, in a goroutine of its own so that no worker encodes.
// The steps the records sent stay in memory, numbered: they are the
// input data's, held by the run anyway.
type spiller struct {
	batches chan []held
	done    chan struct{}

	// Owned by the goroutine until done is closed.
	f     *os.File
	w     *bufio.Writer
	runs  []run
	steps []*inputdata.Step
	ids   map[*inputdata.Step]uint64
	err   error

	closeOnce sync.Once
}

// run is one spilled buffer: its place in the file.
type run struct{ off, n int64 }

func newSpiller() *spiller {
	sp := &spiller{batches: make(chan []held), done: make(chan struct{}), ids: map[*inputdata.Step]uint64{}}
	go sp.loop()
	return sp
}

// add hands a full buffer over; it waits while the one before is being
// written, which bounds what waits in memory to two buffers.
func (sp *spiller) add(b []held) { sp.batches <- b }

func (sp *spiller) loop() {
	defer close(sp.done)
	for b := range sp.batches {
		if sp.err != nil {
			continue // the export fails at Write; memory stays bounded
		}
		sp.err = sp.write(b)
	}
	if sp.w != nil && sp.err == nil {
		sp.err = sp.w.Flush()
	}
}

func (sp *spiller) write(b []held) error {
	if sp.f == nil {
		f, err := os.CreateTemp("", "perfscen-profile-export-*")
		if err != nil {
			return fmt.Errorf("--profile-export-file: spilling requests to a temporary file: %w", err)
		}
		sp.f, sp.w = f, bufio.NewWriterSize(f, 256<<10)
	}
	sortHeld(b)
	start := int64(0)
	if len(sp.runs) > 0 {
		last := sp.runs[len(sp.runs)-1]
		start = last.off + last.n
	}
	cw := &countWriter{w: sp.w}
	var scratch []byte
	for _, h := range b {
		scratch = sp.encode(scratch[:0], h)
		if _, err := cw.Write(scratch); err != nil {
			return fmt.Errorf("--profile-export-file: spilling requests to %s: %w", sp.f.Name(), err)
		}
	}
	sp.runs = append(sp.runs, run{off: start, n: cw.n})
	return nil
}

// finish waits for every buffer handed over to be written and returns
// the runs; the spiller takes no more.
func (sp *spiller) finish() ([]run, error) {
	sp.closeOnce.Do(func() { close(sp.batches) })
	<-sp.done
	return sp.runs, sp.err
}

func (sp *spiller) close() error {
	_, _ = sp.finish()
	if sp.f == nil {
		return nil
	}
	sp.f.Close()
	return os.Remove(sp.f.Name())
}

// encode appends h in the spill's form: experiment, send time, sequence
// id, step number (0: none), response times, outputs.
func (sp *spiller) encode(b []byte, h held) []byte {
	r := h.rec
	b = binary.AppendUvarint(b, uint64(h.exp))
	b = binary.AppendUvarint(b, ns(r.Sent))
	b = binary.AppendUvarint(b, r.SequenceID)
	var id uint64
	if r.Step != nil {
		var ok bool
		if id, ok = sp.ids[r.Step]; !ok {
			sp.steps = append(sp.steps, r.Step)
			id = uint64(len(sp.steps))
			sp.ids[r.Step] = id
		}
	}
	b = binary.AppendUvarint(b, id)
	b = binary.AppendUvarint(b, uint64(len(r.Responses)))
	for _, t := range r.Responses {
		b = binary.AppendUvarint(b, ns(t))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Outputs)))
	for _, o := range r.Outputs {
		b = binary.AppendUvarint(b, uint64(len(o)))
		b = append(b, o...)
	}
	return b
}

// flat is a record as the writer reads it back.
type flat struct {
	exp       int
	sent, seq uint64
	step      *inputdata.Step
	resp      []uint64
	out       [][]byte
}

func flatten(h held) flat {
	r := h.rec
	f := flat{exp: h.exp, sent: ns(r.Sent), seq: r.SequenceID, step: r.Step, out: r.Outputs, resp: make([]uint64, len(r.Responses))}
	for i, t := range r.Responses {
		f.resp[i] = ns(t)
	}
	return f
}

// decode reads one record of a run.
func decode(r *bufio.Reader, steps []*inputdata.Step) (flat, error) {
	var f flat
	u := func() uint64 {
		v, err := binary.ReadUvarint(r)
		if err != nil && f.exp >= 0 {
			f.exp = -1
		}
		return v
	}
	exp, err := binary.ReadUvarint(r)
	if err != nil {
		return f, err // io.EOF: the run is over
	}
	f.exp = int(exp)
	f.sent, f.seq = u(), u()
	if id := u(); id > 0 && id <= uint64(len(steps)) {
		f.step = steps[id-1]
	}
	f.resp = make([]uint64, u())
	for i := range f.resp {
		f.resp[i] = u()
	}
	if n := u(); n > 0 {
		f.out = make([][]byte, n)
		for i := range f.out {
			f.out[i] = make([]byte, u())
			if _, err := io.ReadFull(r, f.out[i]); err != nil {
				f.exp = -1
			}
		}
	}
	if f.exp < 0 {
		return f, errors.New("--profile-export-file: the spilled requests are truncated")
	}
	return f, nil
}

func sortHeld(b []held) {
	slices.SortStableFunc(b, func(p, q held) int {
		return cmp.Or(cmp.Compare(p.exp, q.exp), p.rec.Sent.Compare(q.rec.Sent))
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// merger yields every record, spilled or not, by experiment and send
// time; of two sent at one instant, the one recorded first.
type merger struct {
	h       mergeHeap
	mem     []held
	memNext int
	steps   []*inputdata.Step
	failed  error
}

type source struct {
	r    *bufio.Reader
	head flat
	ord  int // the run's place: earlier runs hold earlier records
}

type mergeHeap []*source

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.head.exp != b.head.exp {
		return a.head.exp < b.head.exp
	}
	if a.head.sent != b.head.sent {
		return a.head.sent < b.head.sent
	}
	return a.ord < b.ord
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(v any)   { *h = append(*h, v.(*source)) }
func (h *mergeHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// merged starts reading back the records; x.mu is held.
func (x *Export) merged() (*merger, error) {
	m := &merger{}
	sortHeld(x.buf)
	m.mem = x.buf
	if x.spill != nil {
		runs, err := x.spill.finish()
		if err != nil {
			return nil, err
		}
		m.steps = x.spill.steps
		for i, rn := range runs {
			s := &source{r: bufio.NewReaderSize(io.NewSectionReader(x.spill.f, rn.off, rn.n), 16<<10), ord: i}
			if m.advance(s) {
				m.h = append(m.h, s)
			}
		}
		heap.Init(&m.h)
		if m.failed != nil {
			return nil, m.failed
		}
	}
	return m, nil
}

// advance reads s's next record into its head; false at its end.
func (m *merger) advance(s *source) bool {
	f, err := decode(s.r, m.steps)
	if err != nil {
		if !errors.Is(err, io.EOF) && m.failed == nil {
			m.failed = err
		}
		return false
	}
	s.head = f
	return true
}

// next is the next record in order; false when there is none left (or
// reading failed: err says).
func (m *merger) next() (flat, bool) {
	if m.failed != nil {
		return flat{}, false
	}
	var fromMem *flat
	if m.memNext < len(m.mem) {
		f := flatten(m.mem[m.memNext])
		fromMem = &f
	}
	if len(m.h) > 0 {
		top := m.h[0]
		// The records still in memory came after every spilled one:
		// ties go to the spilled.
		if fromMem == nil || top.head.exp < fromMem.exp || (top.head.exp == fromMem.exp && top.head.sent <= fromMem.sent) {
			f := top.head
			if m.advance(top) {
				heap.Fix(&m.h, 0)
			} else {
				heap.Pop(&m.h)
			}
			return f, m.failed == nil
		}
	}
	if fromMem == nil {
		return flat{}, false
	}
	m.memNext++
	return *fromMem, true
}

func (m *merger) err() error { return m.failed }
