package refserver

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// inferInput is one request input after protocol parsing; exactly one of
// raw, decode and shm says where its data is.
type inferInput struct {
	name  string
	dtype tensor.DataType
	shape []int64
	raw   []byte
	// decode turns typed data (JSON, gRPC contents) into raw form; it runs
	// after the input is validated and is timed as compute_input.
	decode func(dt tensor.DataType, shape []int64) ([]byte, error)
	shm    *shmRef
	hasRaw bool
}

// outputRequest is one requested output; binary is HTTP's binary_data.
// implicit marks outputs returned because the request listed none.
type outputRequest struct {
	name       string
	shm        *shmRef
	binary     bool
	implicit   bool
	classCount int // classification extension: top-k as BYTES; 0 = off
}

// inferRequest is a protocol-neutral inference request.
type inferRequest struct {
	model, version, id string
	inputs             []inferInput
	outputs            []outputRequest // nil: all outputs
	seq                sequenceParams
	timeout            time.Duration // schedule policy: longest queue wait, 0 = none
	emptyFinal         bool          // gRPC triton_enable_empty_final_response
	// queued, when set, is called once the request is in its model's queue
	// or has failed before getting there: a stream reads its next request
	// only then, so requests reach the model in stream order.
	queued   func()
	received time.Time
	// endpoint names the API in errors for decoupled models, which only
	// gRPC streams serve.
	endpoint string
}

// inferOutput is one response tensor; raw is nil when it went to shm.
type inferOutput struct {
	name  string
	dtype tensor.DataType
	shape []int64
	raw   []byte
	req   outputRequest
}

// inferOutcome is a successful execution whose response the protocol layer
// still has to encode; finish records the request's statistics.
type inferOutcome struct {
	model    *loadedModel
	version  string
	outputs  []inferOutput
	job      *job
	received time.Time
	decode   time.Duration // input decoding, part of compute_input
	shmOut   time.Duration // output copies to shm, part of compute_output
}

// finish records statistics once the response is encoded (or failed to).
func (o *inferOutcome) finish(encode time.Duration, err error) {
	end := time.Now()
	if err != nil {
		o.model.stats.failure(end.Sub(o.received), end)
		return
	}
	j := o.job
	o.model.stats.success(end.Sub(o.received), j.dequeued.Sub(j.enqueued),
		o.decode+j.computeInput, j.computeInfer, j.computeOutput+o.shmOut+encode, end)
}

// resolve finds a ready model for name and version ("" = latest).
func (s *Server) resolve(name, version string) (*loadedModel, error) {
	m, ok := s.repo.get(name)
	if !ok {
		if s.repo.known(name) {
			// Unloaded (Triton: "has no available versions").
			return nil, errorf(codeNotFound, "Request for unknown model: '%s' has no available versions", name)
		}
		return nil, errorf(codeNotFound, "Request for unknown model: '%s' is not found", name)
	}
	if version != "" && version != modelVersion {
		if _, err := strconv.ParseInt(version, 10, 64); err != nil {
			return nil, errorf(codeInvalidArg, "failed to parse model version '%s' for model '%s'", version, name)
		}
		return nil, errorf(codeNotFound, "Request for unknown model: '%s' version %s is not found", name, version)
	}
	return m, nil
}

// infer validates, decodes, schedules and runs req. As in Triton, a
// request rejected while being normalized (unknown model, wrong inputs,
// shapes, datatypes, batch size, undecodable data) records no statistics;
// once accepted for execution, any error counts as a failure.
func (s *Server) infer(ctx context.Context, req *inferRequest) (*inferOutcome, error) {
	m, err := s.resolve(req.model, req.version)
	if err != nil {
		return nil, err
	}
	if m.def.decoupled {
		return nil, errDecoupled(req.endpoint)
	}
	p, err := s.normalize(m, req)
	if err != nil {
		return nil, err
	}
	out, err := s.execute(ctx, m, req, p)
	if err != nil {
		end := time.Now()
		m.stats.failure(end.Sub(req.received), end)
		return nil, err
	}
	return out, nil
}

// normalized is a request that passed validation and whose inputs are in
// raw form, ready to queue.
type normalized struct {
	inputs  []tensorBuf
	batch   int
	outputs []outputRequest
	decode  time.Duration
}

// normalize mirrors Triton's request normalization: everything it rejects
// goes back to the client before the request reaches the scheduler.
func (s *Server) normalize(m *loadedModel, req *inferRequest) (*normalized, error) {
	def := m.def
	ordered, batch, err := checkInputs(def, req.inputs)
	if err != nil {
		return nil, requestScoped(err, req.id)
	}
	outReqs, err := checkOutputs(def, req.outputs)
	if err != nil {
		return nil, err
	}
	if def.sequence && !req.seq.active() {
		return nil, errorf(codeInvalidArg, "inference request to model '%s' must specify a non-zero or non-empty correlation ID", def.name)
	}
	t0 := time.Now()
	bufs := make([]tensorBuf, len(ordered))
	for i, in := range ordered {
		raw, err := s.materialize(def, in)
		if err != nil {
			return nil, err
		}
		bufs[i] = tensorBuf{shape: in.shape, raw: raw}
	}
	return &normalized{inputs: bufs, batch: batch, outputs: outReqs, decode: time.Since(t0)}, nil
}

// execute queues a normalized request, waits for its execution and places
// its outputs.
func (s *Server) execute(ctx context.Context, m *loadedModel, req *inferRequest, p *normalized) (*inferOutcome, error) {
	j := newJob(ctx, m.def, req, p)
	if err := m.submit(j); err != nil {
		return nil, err
	}
	t1 := time.Now()
	outs, err := s.placeOutputs(m.def, p.outputs, j.outputs)
	if err != nil {
		return nil, err
	}
	return &inferOutcome{model: m, version: modelVersion, outputs: outs, job: j, received: req.received, decode: p.decode, shmOut: time.Since(t1)}, nil
}

func newJob(ctx context.Context, def *modelDef, req *inferRequest, p *normalized) *job {
	j := &job{ctx: ctx, inputs: p.inputs, batchSize: p.batch, seq: req.seq, timeout: req.timeout, queued: req.queued}
	if def.maxBatchSize > 0 {
		j.key = batchKey(p.inputs)
	}
	return j
}

// placeOutputs pairs the requested outputs with the model's results and
// copies those bound to shared memory there (their raw is then nil).
func (s *Server) placeOutputs(def *modelDef, reqs []outputRequest, results []tensorBuf) ([]inferOutput, error) {
	outs := make([]inferOutput, 0, len(reqs))
	for _, r := range reqs {
		i := def.outputIndex(r.name)
		o := inferOutput{name: r.name, dtype: def.outputs[i].dtype, shape: results[i].shape, raw: results[i].raw, req: r}
		if r.classCount > 0 {
			var err error
			if o, err = classify(o, r.classCount, def.maxBatchSize > 0); err != nil {
				return nil, err
			}
		}
		if r.shm != nil {
			if int64(len(o.raw)) > r.shm.size {
				return nil, errorf(codeInvalidArg, "shared memory size specified with the request for output '%s' (%d bytes) should be at least %d bytes to hold the results", r.name, r.shm.size, len(o.raw))
			}
			if err := s.shm.write(*r.shm, o.raw); err != nil {
				return nil, err
			}
			o.raw = nil
		}
		outs = append(outs, o)
	}
	return outs, nil
}

func (d *modelDef) inputIndex(name string) int {
	for i, t := range d.inputs {
		if t.name == name {
			return i
		}
	}
	return -1
}

func (d *modelDef) outputIndex(name string) int {
	for i, t := range d.outputs {
		if t.name == name {
			return i
		}
	}
	return -1
}

// checkInputs matches request inputs to the config, checks datatypes and
// shapes, and returns them in config order with the request's batch size.
func checkInputs(def *modelDef, ins []inferInput) ([]*inferInput, int, error) {
	ordered := make([]*inferInput, len(def.inputs))
	for k := range ins {
		in := &ins[k]
		i := def.inputIndex(in.name)
		if i < 0 {
			return nil, 0, errorf(codeInvalidArg, "unexpected inference input '%s' for model '%s'", in.name, def.name)
		}
		if ordered[i] != nil {
			return nil, 0, errorf(codeInvalidArg, "input '%s' is specified more than once for model '%s'", in.name, def.name)
		}
		ordered[i] = in
	}
	var missing []string
	for i, in := range ordered {
		if in == nil {
			missing = append(missing, def.inputs[i].name)
		}
	}
	if len(missing) > 0 {
		got := make([]string, len(ins))
		for k, in := range ins {
			got[k] = in.name
		}
		return nil, 0, scopedf(codeInvalidArg, "expected %d inputs but got %d inputs for model '%s'. Got input(s) ['%s'], but missing required input(s) ['%s']. Please provide all required input(s).",
			len(def.inputs), len(ins), def.name, strings.Join(got, "','"), strings.Join(missing, "','"))
	}
	batch := 1
	for i, in := range ordered {
		spec := def.inputs[i]
		if in.dtype != spec.dtype {
			return nil, 0, scopedf(codeInvalidArg, "inference input '%s' data-type is '%s', but model '%s' expects '%s'", in.name, in.dtype, def.name, spec.dtype)
		}
		b, err := checkShape(def, spec, in.shape)
		if err != nil {
			return nil, 0, err
		}
		if i > 0 && b != batch {
			return nil, 0, errorf(codeInvalidArg, "input '%s' has batch size %d but input '%s' has %d for model '%s'", in.name, b, ordered[0].name, batch, def.name)
		}
		batch = b
	}
	return ordered, batch, nil
}

// checkShape validates shape against spec (with the batch dimension first
// when the model batches) and returns the batch size.
func checkShape(def *modelDef, spec tensorSpec, shape []int64) (int, error) {
	want := spec.dims
	if def.maxBatchSize > 0 {
		want = append([]int64{-1}, spec.dims...)
	}
	// Triton checks the batch size first: a shape without its batch
	// dimension reads its first dim as the batch.
	if def.maxBatchSize > 0 && len(shape) > 0 && (shape[0] < 1 || shape[0] > int64(def.maxBatchSize)) {
		return 0, scopedf(codeInvalidArg, "inference request batch-size must be <= %d for '%s'", def.maxBatchSize, def.name)
	}
	bad := len(shape) != len(want)
	for i := 0; !bad && i < len(shape); i++ {
		bad = shape[i] < 0 || (want[i] >= 0 && shape[i] != want[i])
	}
	if bad {
		note := ""
		if def.maxBatchSize > 0 {
			note = ". NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
		}
		return 0, scopedf(codeInvalidArg, "unexpected shape for input '%s' for model '%s'. Expected %s, got %s%s", spec.name, def.name, fmtShape(want), fmtShape(shape), note)
	}
	if def.maxBatchSize == 0 {
		return 1, nil
	}
	return int(shape[0]), nil
}

func fmtShape(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// checkOutputs validates requested outputs; nil means all, in config order.
func checkOutputs(def *modelDef, reqs []outputRequest) ([]outputRequest, error) {
	if reqs == nil {
		all := make([]outputRequest, len(def.outputs))
		for i, o := range def.outputs {
			all[i] = outputRequest{name: o.name, implicit: true}
		}
		return all, nil
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if def.outputIndex(r.name) < 0 {
			return nil, errorf(codeInvalidArg, "unexpected inference output '%s' for model '%s'", r.name, def.name)
		}
		if seen[r.name] {
			return nil, errorf(codeInvalidArg, "output '%s' is requested more than once for model '%s'", r.name, def.name)
		}
		seen[r.name] = true
	}
	return reqs, nil
}

// materialize produces an input's raw bytes and checks their size against
// its shape.
func (s *Server) materialize(def *modelDef, in *inferInput) ([]byte, error) {
	var raw []byte
	var err error
	switch {
	case in.shm != nil:
		raw, err = s.shm.read(*in.shm)
	case in.decode != nil:
		raw, err = in.decode(in.dtype, in.shape)
		if err != nil {
			err = errorf(codeInvalidArg, "unable to parse 'data' of input '%s' for model '%s': %v", in.name, def.name, err)
		}
	default:
		raw = in.raw
	}
	if err != nil {
		return nil, err
	}
	n, err := tensor.ElementCount(in.shape)
	if err != nil {
		return nil, errorf(codeInvalidArg, "input '%s': %v", in.name, err)
	}
	if in.dtype == tensor.BYTES {
		got, err := tensor.CountBytesElements(raw)
		if err != nil {
			return nil, errorf(codeInvalidArg, "input '%s' for model '%s': %v", in.name, def.name, err)
		}
		if int64(got) != n {
			return nil, errorf(codeInvalidArg, "input '%s' for model '%s' has %d BYTES elements, shape %s needs %d", in.name, def.name, got, fmtShape(in.shape), n)
		}
		return raw, nil
	}
	want := n * int64(in.dtype.Size())
	if int64(len(raw)) != want {
		return nil, errorf(codeInvalidArg, "input byte size mismatch for input '%s' for model '%s'. Expected %d, got %d", in.name, def.name, want, len(raw))
	}
	return raw, nil
}
