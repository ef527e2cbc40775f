package refserver

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// The reference server's core, for the embedded flavours of service kinds
// other than KServe (TF Serving, TorchServe, …): their front-ends live in
// their kinds' folders and serve the same built-in models, scheduler,
// statistics and fault injection through these calls, so every kind's
// embedded server behaves alike under load.

// TensorInfo is one model input or output: dims exclude the batch
// dimension when the model batches; -1 is variable.
type TensorInfo struct {
	Name     string
	DataType tensor.DataType
	Dims     []int64
}

// ModelInfo describes a loaded built-in model.
type ModelInfo struct {
	Name         string
	Version      string
	Platform     string
	MaxBatchSize int // 0: the model does not batch
	Inputs       []TensorInfo
	Outputs      []TensorInfo
	Sequence     bool // requests need a sequence id
	Decoupled    bool // answers on streams only
	// Instances is how many executions run in parallel (instance_count):
	// a front-end's workers.
	Instances int
}

func infoOf(d *modelDef) ModelInfo {
	conv := func(specs []tensorSpec) []TensorInfo {
		out := make([]TensorInfo, len(specs))
		for i, s := range specs {
			out[i] = TensorInfo{Name: s.name, DataType: s.dtype, Dims: slices.Clone(s.dims)}
		}
		return out
	}
	return ModelInfo{Name: d.name, Version: modelVersion, Platform: d.platform, MaxBatchSize: d.maxBatchSize,
		Inputs: conv(d.inputs), Outputs: conv(d.outputs), Sequence: d.sequence, Decoupled: d.decoupled}
}

// Models lists the loaded models, sorted by name.
func (s *Server) Models() []ModelInfo {
	var out []ModelInfo
	for _, m := range s.repo.loadedModels() {
		out = append(out, m.info())
	}
	slices.SortFunc(out, func(a, b ModelInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Model describes the loaded model name; ok is false when no such model is
// loaded.
func (s *Server) Model(name string) (ModelInfo, bool) {
	m, ok := s.repo.get(name)
	if !ok {
		return ModelInfo{}, false
	}
	return m.info(), true
}

func (m *loadedModel) info() ModelInfo {
	i := infoOf(m.def)
	i.Instances = m.params.Load().instanceCount
	return i
}

// Request is one inference through the core.
type Request struct {
	Model   string
	Version string // "" = the latest
	Inputs  []tensor.Tensor
	// Outputs names the outputs to return; nil returns all, in the
	// model's order.
	Outputs []string
	// SequenceID, SequenceStart and SequenceEnd place the request in a
	// sequence (models with Sequence set).
	SequenceID                 string
	SequenceStart, SequenceEnd bool
}

// Response is a successful inference.
type Response struct {
	Model   string
	Version string
	Outputs []tensor.Tensor
	// Queue is the time the request waited for an instance.
	Queue time.Duration
}

// Code classifies a core error, for front-ends to map onto their
// protocol's statuses.
type Code int

// Error classes.
const (
	InvalidArgument Code = iota // the request does not fit the model
	NotFound                    // no such model (or version)
	Internal                    // the model failed
	Unavailable                 // overloaded, shutting down, or dropped by fault injection
	Unsupported                 // the model cannot answer this way (decoupled)
	Cancelled
)

// CodeOf is err's class; Internal for errors that carry none.
func CodeOf(err error) Code {
	switch classOf(err) {
	case codeInvalidArg:
		return InvalidArgument
	case codeNotFound:
		return NotFound
	case codeUnavailable:
		return Unavailable
	case codeUnsupported:
		return Unsupported
	case codeCancelled:
		return Cancelled
	}
	return Internal
}

// Dropped reports whether fault injection dropped the request: an HTTP
// front-end closes the connection without an answer.
func Dropped(err error) bool { return errors.Is(err, errDropped) }

// Infer runs one request through the model's scheduler, with the same
// validation, statistics and fault injection as the KServe front-end. An
// unknown model is a NotFound error.
func (s *Server) Infer(ctx context.Context, r *Request) (*Response, error) {
	if _, ok := s.repo.get(r.Model); !ok {
		return nil, errorf(codeNotFound, "Request for unknown model: '%s' is not found", r.Model)
	}
	req := &inferRequest{model: r.Model, version: r.Version, received: time.Now(), endpoint: "this API",
		seq: sequenceParams{id: r.SequenceID, start: r.SequenceStart, end: r.SequenceEnd}}
	req.inputs = make([]inferInput, len(r.Inputs))
	for i, t := range r.Inputs {
		req.inputs[i] = inferInput{name: t.Name, dtype: t.DataType, shape: t.Shape, raw: t.Raw, hasRaw: true}
	}
	if r.Outputs != nil {
		req.outputs = make([]outputRequest, len(r.Outputs))
		for i, name := range r.Outputs {
			req.outputs[i] = outputRequest{name: name, binary: true}
		}
	}
	out, err := s.infer(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := &Response{Model: r.Model, Version: out.version, Outputs: make([]tensor.Tensor, len(out.outputs)),
		Queue: out.job.dequeued.Sub(out.job.enqueued)}
	for i, o := range out.outputs {
		resp.Outputs[i] = tensor.Tensor{Name: o.name, DataType: o.dtype, Shape: o.shape, Raw: o.raw}
	}
	out.finish(0, nil)
	return resp, nil
}
