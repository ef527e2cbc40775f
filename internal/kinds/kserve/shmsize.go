package kserve

import (
	"context"
	"time"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

// probeSequenceID is the correlation id of the one request that sizes
// variable outputs of a sequence model; the engine numbers its sequences
// from 1, far below it.
const probeSequenceID = 1 << 62

// probeTimeout bounds the sizing request when the scenario gives no
// server timeout.
const probeTimeout = 30 * time.Second

// outputSizer says how large each output region of a point must be.
type outputSizer struct {
	client   client.Client
	streamer client.Streamer // the point streams: probe over a stream
	model    plan.Model
	spec     inputdata.ModelSpec
	data     *inputdata.Data
	batch    int
	override int64 // output_shared_memory_size; 0 = derive
	timeout  time.Duration
}

// sizes returns every output's region size, in the order of the model's
// outputs. output_shared_memory_size wins; an output whose shape is fixed
// (model config or metadata, with the point's batch size) takes exactly
// its size; the rest are sized from the reply to one request sent before
// any load (the step with the most input bytes, outputs in the reply),
// and when that fails, from perf_analyzer's default per batch element.
// Outputs larger than the probe's (variable shapes) need the override.
func (z outputSizer) sizes(ctx context.Context) (names []string, sizes []uint64) {
	probed := map[string]uint64(nil)
	for _, o := range z.spec.Outputs {
		names = append(names, o.Name)
		var n uint64
		switch {
		case z.override > 0:
			n = uint64(z.override)
		default:
			n = z.fixedSize(o)
			if n == 0 {
				if probed == nil {
					probed = z.probe(ctx)
				}
				n = probed[o.Name]
			}
			if n == 0 {
				n = uint64(defaultOutputShmSize * max(z.batch, 1))
			}
		}
		sizes = append(sizes, n)
	}
	return names, sizes
}

// fixedSize is o's byte size when its shape is fixed, else 0.
func (z outputSizer) fixedSize(o inputdata.TensorSpec) uint64 {
	shape := o.Dims
	if z.spec.MaxBatchSize > 0 {
		shape = append([]int64{int64(max(z.batch, 1))}, o.Dims...)
	}
	if o.DataType == tensor.BYTES {
		return 0
	}
	for _, d := range shape {
		if d < 0 {
			return 0
		}
	}
	n, err := tensor.ByteSize(o.DataType, shape)
	if err != nil || n <= 0 {
		return 0
	}
	return uint64(n)
}

// probe sends the step with the most input bytes once, outputs in the
// reply, and returns the largest byte size each output took; nil when the
// request failed (the load will then say why).
func (z outputSizer) probe(ctx context.Context) map[string]uint64 {
	step := largestStep(z.data)
	if step == nil {
		return nil
	}
	req := &client.InferRequest{Model: z.model.Name, Version: z.model.Version, ID: "perfscen-shm-probe"}
	for _, t := range step.Inputs {
		req.Inputs = append(req.Inputs, client.Input{Tensor: t})
	}
	if z.model.Sequence {
		req.Parameters = map[string]any{"sequence_id": int64(probeSequenceID), "sequence_start": true, "sequence_end": true}
	}
	timeout := z.timeout
	if timeout <= 0 {
		timeout = probeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got := map[string]uint64{}
	note := func(r *client.InferResponse) {
		for _, t := range r.Outputs {
			got[t.Name] = max(got[t.Name], uint64(len(t.Raw)))
		}
	}
	if z.streamer == nil {
		resp, err := z.client.Infer(ctx, req)
		if err != nil {
			return nil
		}
		note(resp)
		return got
	}
	st, err := z.streamer.InferStream(ctx)
	if err != nil {
		return nil
	}
	defer st.CloseSend()
	if err := st.Send(req); err != nil {
		return nil
	}
	for {
		resp, err := st.Recv()
		if err != nil {
			return nil
		}
		if resp.ID != req.ID {
			continue
		}
		note(resp)
		if resp.Final() {
			return got
		}
	}
}

// largestStep is the step of d with the most input bytes.
func largestStep(d *inputdata.Data) *inputdata.Step {
	var best *inputdata.Step
	bestN := -1
	for i := range d.Streams {
		for j := range d.Streams[i] {
			st := &d.Streams[i][j]
			n := 0
			for _, t := range st.Inputs {
				n += len(t.Raw)
			}
			if n > bestN {
				best, bestN = st, n
			}
		}
	}
	return best
}
