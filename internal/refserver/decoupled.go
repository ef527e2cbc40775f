package refserver

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// decoupledPart is one response of a decoupled model, or the error that
// ends its responses.
type decoupledPart struct {
	outputs []tensorBuf
	err     error
}

// repeat_int32 is Triton's decoupled example (the repeat backend): for a
// request it sends one response per element of IN, OUT = [IN[i]] and IDX
// = [i], each after DELAY[i] milliseconds, and releases its instance
// after WAIT milliseconds, so with WAIT below the sum of DELAY one
// instance interleaves the responses of several requests. IN of shape [0]
// gets no response, only the final flag.
func repeatInt32Model() *modelDef {
	return &modelDef{
		name: "repeat_int32", platform: builtinPlatform, maxBatchSize: 0, decoupled: true,
		inputs: []tensorSpec{
			{name: "IN", dtype: tensor.INT32, dims: []int64{-1}},
			{name: "DELAY", dtype: tensor.UINT32, dims: []int64{-1}},
			{name: "WAIT", dtype: tensor.UINT32, dims: []int64{1}},
		},
		outputs: []tensorSpec{
			{name: "OUT", dtype: tensor.INT32, dims: []int64{1}},
			{name: "IDX", dtype: tensor.UINT32, dims: []int64{1}},
		},
		newEngine: func() engine { return engineFunc(repeatExecute) },
	}
}

func repeatExecute(ctx context.Context, b *execBatch) ([]tensorBuf, error) {
	j := b.jobs[0]
	in, delay, wait := b.inputs[0], b.inputs[1], b.inputs[2]
	if !equalShape(in.shape, delay.shape) {
		return nil, errorf(codeInvalidArg, "expected IN and DELAY shape to match, got %s and %s", fmtShape(in.shape), fmtShape(delay.shape))
	}
	n := len(in.raw) / 4
	go func() {
		defer close(j.emit)
		for i := range n {
			d := time.Duration(binary.LittleEndian.Uint32(delay.raw[4*i:])) * time.Millisecond
			if err := b.after.sleep(j.ctx, d); err != nil {
				sendPart(j, decoupledPart{err: errorf(codeCancelled, "request cancelled: %v", err)})
				return
			}
			out := []tensorBuf{
				{shape: []int64{1}, raw: append([]byte(nil), in.raw[4*i:4*i+4]...)},
				{shape: []int64{1}, raw: binary.LittleEndian.AppendUint32(nil, uint32(i))},
			}
			if !sendPart(j, decoupledPart{outputs: out}) {
				return
			}
		}
	}()
	w := time.Duration(binary.LittleEndian.Uint32(wait.raw)) * time.Millisecond
	if err := b.after.sleep(ctx, w); err != nil {
		return nil, err
	}
	return nil, nil
}

// sendPart hands a response to the request's reader; false when the
// request is gone.
func sendPart(j *job, p decoupledPart) bool {
	select {
	case j.emit <- p:
		return true
	case <-j.ctx.Done():
		return false
	}
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func errDecoupled(endpoint string) error {
	return errorf(codeUnsupported, "%s doesn't support models with decoupled transaction policy", endpoint)
}

// inferDecoupled runs a request of a decoupled model, calling send for
// each of its responses as the model produces them; it returns once the
// model has sent its last one (Triton's final flag).
func (s *Server) inferDecoupled(ctx context.Context, m *loadedModel, req *inferRequest, send func([]inferOutput)) error {
	p, err := s.normalize(m, req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	j := newJob(ctx, m.def, req, p)
	j.emit = make(chan decoupledPart)
	submitted := make(chan error, 1)
	go func() { submitted <- m.submit(j) }()
	fail := func(err error) error {
		end := time.Now()
		m.stats.failure(end.Sub(req.received), end)
		return err
	}
	var shmOut time.Duration
	emitting, waiting := true, true
	for emitting || waiting {
		select {
		case part, ok := <-j.emit:
			if !ok {
				emitting = false
				continue
			}
			if part.err != nil {
				return fail(part.err)
			}
			t := time.Now()
			outs, err := s.placeOutputs(m.def, p.outputs, part.outputs)
			shmOut += time.Since(t)
			if err != nil {
				return fail(err)
			}
			send(outs)
		case err := <-submitted:
			if err != nil {
				return fail(err)
			}
			waiting = false
		}
	}
	out := &inferOutcome{model: m, version: modelVersion, job: j, received: req.received, decode: p.decode, shmOut: shmOut}
	out.finish(0, nil)
	return nil
}
