package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/validate"
)

// defaultSequenceLength is perf_analyzer's --sequence-length, used when a
// sequence model is fed flat (non-stream) data.
const defaultSequenceLength = 20

// compareFunc returns "" when got matches expected, else a description of
// the first difference.
type compareFunc func(expected, got []tensor.Tensor) string

// pointLoad is what every worker of a point shares; it is read-only once
// built.
type pointLoad struct {
	client   client.Client
	streamer client.Streamer // non-nil for streaming points
	model    string
	version  string
	data     *inputdata.Data
	offsets  []int // flat index of each stream's first step
	sequence bool
	seqIDs   *atomic.Uint64 // shared correlation-id source, unique per run
	timeout  time.Duration

	shm *shmSet // nil without shared memory

	compare       compareFunc       // nil: no validation
	sampler       *validate.Sampler // which responses compare checks
	validateEvery int               // after the first ones, 1 response in this many (1 = all)

	llm *genLoad // generation (openai kind) points only
}

// worker issues one request at a time; it is owned by one goroutine.
type worker struct {
	pl     *pointLoad
	id     int
	cursor *inputdata.Cursor
	reqs   []*client.InferRequest // prepared lazily, by flat step index
	params map[string]any         // sequence parameters, reused
	seqPos int                    // position in a flat-data sequence
	count  uint64                 // requests issued, for ids
	idBuf  []byte

	stream    client.Stream
	streamCtx context.Context

	// conn is this worker's own connection when the client offers one:
	// the worker's goroutine then does the whole exchange itself.
	conn client.Conn

	outputs *workerOutputs // this worker's output shm regions
	gapCap  int            // generation: gap buffer size to start with
}

func (pl *pointLoad) newWorker(ctx context.Context, id, workers int) (*worker, error) {
	w := &worker{pl: pl, id: id, cursor: pl.data.Cursor(id, workers), streamCtx: ctx,
		reqs: make([]*client.InferRequest, pl.data.Len())}
	if pl.sequence {
		w.params = map[string]any{}
	}
	if cc, ok := pl.client.(client.ConnClient); ok && pl.streamer == nil {
		w.conn = cc.NewConn()
	}
	if pl.shm != nil {
		o, err := pl.shm.workerOutputs(ctx, id)
		if err != nil {
			return nil, err
		}
		w.outputs = o
	}
	return w, nil
}

// request returns the prepared request of a cursor step, building it the
// first time this worker meets the step.
func (w *worker) request(r inputdata.Request) *client.InferRequest {
	i := w.pl.offsets[r.Stream] + r.Index
	if req := w.reqs[i]; req != nil {
		return req
	}
	req := &client.InferRequest{Model: w.pl.model, Version: w.pl.version, Parameters: w.params}
	req.Inputs = make([]client.Input, len(r.Inputs))
	for k, t := range r.Inputs {
		req.Inputs[k] = client.Input{Tensor: t}
		if w.pl.shm != nil {
			ref := w.pl.shm.inputRef(i, k)
			req.Inputs[k].Tensor.Raw = nil
			req.Inputs[k].Shm = &ref
		}
	}
	if w.outputs != nil {
		req.Outputs = w.outputs.requested
	}
	w.reqs[i] = req
	return req
}

func (w *worker) setSequence(r inputdata.Request) {
	start, end := r.Start, r.End
	if !w.pl.data.Sequences {
		n := min(len(w.pl.data.Streams[0]), defaultSequenceLength)
		start, end = w.seqPos == 0, w.seqPos == n-1
		w.seqPos = (w.seqPos + 1) % n
	}
	if start || w.params["sequence_id"] == nil {
		w.params["sequence_id"] = int64(w.pl.seqIDs.Add(1))
	}
	w.params["sequence_start"] = start
	w.params["sequence_end"] = end
}

// do sends the next request and fills s; s.sched is set by the caller.
// clock reads the point's monotonic clock.
func (w *worker) do(ctx context.Context, s *sample, clock func() time.Duration) {
	r := w.cursor.Next()
	if w.pl.llm != nil {
		w.count++
		w.doGen(ctx, s, clock, r)
		return
	}
	req := w.request(r)
	if w.pl.sequence {
		w.setSequence(r)
	}
	w.count++
	s.sent = clock()
	resp, err := w.call(ctx, req, s, clock)
	s.done = clock()
	if err != nil {
		s.err = err
		return
	}
	s.sendRecv, s.wait = resp.Timing.SendRecv, resp.Timing.Wait
	// Validation runs after the completion stamp, outside the timed part.
	if w.pl.compare != nil && len(r.Expected) > 0 && w.pl.sampler.Sample() {
		s.checked = true
		got := resp.Outputs
		if w.outputs != nil {
			got, err = w.outputs.read(resp.Outputs)
			if err != nil {
				s.mismatch = err.Error()
				return
			}
		}
		s.mismatch = w.pl.compare(r.Expected, got)
	}
}

func (w *worker) call(ctx context.Context, req *client.InferRequest, s *sample, clock func() time.Duration) (*client.InferResponse, error) {
	if w.pl.streamer != nil {
		return w.callStream(req, s, clock)
	}
	if w.conn != nil {
		return w.conn.Infer(ctx, req, w.pl.timeout)
	}
	if w.pl.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.pl.timeout)
		defer cancel()
	}
	return w.pl.client.Infer(ctx, req)
}

// callStream sends on this worker's stream and waits for the final
// response with the same id; responses to earlier requests (whose wait was
// abandoned) are skipped. A decoupled model answers several responses per
// request: as perf_analyzer does, the request completes at the final one,
// and the first response's time is kept in s. The response returned is the
// last that carried outputs. A transport failure drops the stream so the
// next call reopens it.
func (w *worker) callStream(req *client.InferRequest, s *sample, clock func() time.Duration) (*client.InferResponse, error) {
	if w.stream == nil {
		st, err := w.pl.streamer.InferStream(w.streamCtx)
		if err != nil {
			return nil, err
		}
		w.stream = st
	}
	w.idBuf = strconv.AppendUint(append(w.idBuf[:0], 'w'), uint64(w.id), 10)
	w.idBuf = strconv.AppendUint(append(w.idBuf, '-'), w.count, 10)
	req.ID = string(w.idBuf)
	if err := w.stream.Send(req); err != nil {
		w.stream = nil
		return nil, err
	}
	var last *client.InferResponse
	for {
		resp, err := w.stream.Recv()
		if resp != nil && resp.ID != req.ID {
			continue
		}
		var se *client.ServerError
		if err != nil && !errors.As(err, &se) {
			w.stream = nil
		}
		if err != nil {
			return nil, err
		}
		if len(resp.Outputs) > 0 {
			if s.responses == 0 {
				s.first = clock()
			}
			s.responses++
			last = resp
		}
		if !resp.Final() {
			s.decoupled = true
			continue
		}
		if len(resp.Outputs) == 0 && resp.Parameters[client.ParamFinalResponse] != nil {
			s.decoupled = true // the empty final response of a decoupled model
		}
		if last == nil {
			last = resp
		}
		return last, nil
	}
}

func (w *worker) close() {
	if w.conn != nil {
		_ = w.conn.Close()
		w.conn = nil
	}
	if w.stream != nil {
		_ = w.stream.CloseSend()
		w.stream = nil
	}
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
