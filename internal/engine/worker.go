package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/validate"
)

// defaultSequenceLength is perf_analyzer's --sequence-length, used when a
// sequence model is fed flat (non-stream) data.
const defaultSequenceLength = 20

// pointLoad is what every worker of a point shares; it is read-only once
// built.
type pointLoad struct {
	kind     kinds.Point
	data     *inputdata.Data
	offsets  []int // flat index of each stream's first step
	sequence bool
	seqLen   int // flat data: requests per sequence (0: defaultSequenceLength)
	// seqVariation varies each flat-data sequence's length by up to this
	// percentage either way.
	seqVariation float64
	seqIDs       *atomic.Uint64 // shared correlation-id source, unique per run

	validate      bool              // compare outputs with the data's expected ones
	sampler       *validate.Sampler // which responses are checked
	validateEvery int               // after the first ones, 1 response in this many (1 = all)

	llm *genLoad // generation (openai kind) points only

	// byTick sends request n of an open-loop schedule with step n of the
	// data (a trace: each request has its own time and its own prompt)
	// instead of walking the worker's cursor.
	byTick bool

	// record, when set, is given every completed request
	// (Options.Requests).
	record func(*Record)
}

// worker issues one request at a time; it is owned by one goroutine.
type worker struct {
	pl     *pointLoad
	id     int
	cursor *inputdata.Cursor
	caller kinds.Caller
	seq    kinds.Sequence
	seqPos int // position in a flat-data sequence
	seqN   int // length of the current flat-data sequence
	// rng draws varied sequence lengths (nil without variation); seeded
	// by the worker's id, so a run's lengths are the same each time, as
	// perf_analyzer's rand() is.
	rng    *rand.Rand
	gapCap int // generation: gap buffer size to start with
	// epoch is the session clock's zero, for records.
	epoch time.Time
}

// newWorker makes worker id, which walks the input data as cursor of
// cursors.
func (pl *pointLoad) newWorker(ctx context.Context, id, cursor, cursors int) (*worker, error) {
	c, err := pl.kind.NewCaller(ctx, id)
	if err != nil {
		return nil, err
	}
	w := &worker{pl: pl, id: id, cursor: pl.data.Cursor(cursor, cursors), caller: c}
	if pl.sequence && pl.seqVariation > 0 {
		w.rng = rand.New(rand.NewPCG(uint64(id), 0x5e9))
	}
	return w, nil
}

// setSequence places the next request in its sequence: a stream of the
// data is one sequence; flat data is cut into sequences of
// defaultSequenceLength steps, as perf_analyzer does.
func (w *worker) setSequence(r inputdata.Request) {
	start, end := r.Start, r.End
	if !w.pl.data.Sequences {
		// perf_analyzer's SequenceManager: JSON data's steps make one
		// sequence unless a length is given; synthetic data (random,
		// zero, a directory) has sequences of the length, cycling the
		// data's steps.
		if w.seqPos == 0 {
			w.seqN = w.nextSequenceLength()
		}
		start, end = w.seqPos == 0, w.seqPos == w.seqN-1
		w.seqPos = (w.seqPos + 1) % w.seqN
	}
	if start || w.seq.ID == 0 {
		w.seq.ID = w.pl.seqIDs.Add(1)
	}
	w.seq.Start, w.seq.End = start, end
}

// nextSequenceLength is the length of the flat-data sequence that starts
// now: the scenario's, else perf_analyzer's 20, varied when asked; JSON
// data's steps are one sequence as long as they are (perf_analyzer varies
// only a given length).
func (w *worker) nextSequenceLength() int {
	n := defaultSequenceLength
	switch {
	case w.pl.seqLen > 0:
		n = w.pl.seqLen
	case w.pl.data.FromJSON:
		return len(w.pl.data.Streams[0])
	}
	if w.rng == nil {
		return n
	}
	return variedLength(n, w.pl.seqVariation, w.rng.Float64())
}

// variedLength is a new sequence's length: n moved by up to variation
// percent either way, uniformly (u in [0, 1)), truncated toward zero and
// at least 1: perf_analyzer's SequenceManager::GetRandomSequenceLength.
func variedLength(n int, variation, u float64) int {
	off := int((2*u - 1) * variation / 100 * float64(n))
	if n+off <= 0 {
		return 1
	}
	return n + off
}

// do sends the next request and fills s; s.sched (and, open loop,
// s.tick) is set by the caller. clock reads the point's monotonic clock.
func (w *worker) do(ctx context.Context, s *sample, clock func() time.Duration) {
	var r inputdata.Request
	if w.pl.byTick && s.paced {
		steps := w.pl.data.Streams[0]
		i := int(s.tick % uint64(len(steps)))
		r = inputdata.Request{Step: &steps[i], Index: i}
	} else {
		r = w.cursor.Next()
	}
	req := kinds.Request{Step: r, Index: w.pl.offsets[r.Stream] + r.Index}
	if w.pl.sequence {
		w.setSequence(r)
		req.Seq = &w.seq
		s.seqEnd = w.seq.End
	}
	if w.pl.llm != nil {
		// A fresh gap buffer per request: the aggregator reads it after
		// the worker moved on. Its size follows the last reply, so it
		// rarely grows.
		s.Tokens = &kinds.TokenTrace{Gaps: make([]time.Duration, 0, w.gapCap), Capture: w.pl.record != nil}
	}
	req.Check = w.pl.validate && len(r.Expected) > 0 && w.pl.sampler.Sample(req.Index)
	w.caller.Call(ctx, clock, &req, &s.Outcome)
	if w.pl.record != nil {
		w.pl.record(newRecord(w.epoch, r, req.Seq, s))
	}
	if w.pl.llm != nil && s.Err == nil {
		w.gapCap = max(len(s.Tokens.Gaps), 8)
		s.llm = w.pl.llm.judge(s)
	}
}

func (w *worker) close() {
	_ = w.caller.Close()
}

// flatOffsets indexes the first step of each stream in a flat numbering.
func flatOffsets(d *inputdata.Data) ([]int, error) {
	if len(d.Streams) == 0 || len(d.Streams[0]) == 0 {
		return nil, fmt.Errorf("input data has no requests")
	}
	offs := make([]int, len(d.Streams))
	n := 0
	for i, s := range d.Streams {
		if len(s) == 0 {
			return nil, fmt.Errorf("input data stream %d is empty", i)
		}
		offs[i] = n
		n += len(s)
	}
	return offs, nil
}
