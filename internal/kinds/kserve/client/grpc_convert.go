package client

import (
	"fmt"
	"sort"

	"github.com/perfscen/perfscen/internal/kservev2"
	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func sortRegions(r []kservev2.SystemSharedMemoryStatus) {
	sort.Slice(r, func(i, j int) bool { return r[i].Name < r[j].Name })
}

func durFromProto(d *pb.StatisticDuration) kservev2.StatDuration {
	return kservev2.StatDuration{Count: d.GetCount(), Ns: d.GetNs()}
}

// StatsFromProto converts gRPC model statistics to the JSON-shaped form.
func StatsFromProto(m *pb.ModelStatistics) ModelStats {
	is := m.GetInferenceStats()
	out := ModelStats{
		Name:           m.GetName(),
		Version:        m.GetVersion(),
		LastInference:  m.GetLastInference(),
		InferenceCount: m.GetInferenceCount(),
		ExecutionCount: m.GetExecutionCount(),
		InferenceStats: kservev2.InferStats{
			Success:       durFromProto(is.GetSuccess()),
			Fail:          durFromProto(is.GetFail()),
			Queue:         durFromProto(is.GetQueue()),
			ComputeInput:  durFromProto(is.GetComputeInput()),
			ComputeInfer:  durFromProto(is.GetComputeInfer()),
			ComputeOutput: durFromProto(is.GetComputeOutput()),
			CacheHit:      durFromProto(is.GetCacheHit()),
			CacheMiss:     durFromProto(is.GetCacheMiss()),
		},
	}
	for _, b := range m.GetBatchStats() {
		out.BatchStats = append(out.BatchStats, kservev2.BatchStats{
			BatchSize:     b.GetBatchSize(),
			ComputeInput:  durFromProto(b.GetComputeInput()),
			ComputeInfer:  durFromProto(b.GetComputeInfer()),
			ComputeOutput: durFromProto(b.GetComputeOutput()),
		})
	}
	for _, u := range m.GetMemoryUsage() {
		out.MemoryUsage = append(out.MemoryUsage, kservev2.MemoryUsage{Type: u.GetType(), ID: u.GetId(), ByteSize: u.GetByteSize()})
	}
	if len(m.GetResponseStats()) > 0 {
		out.ResponseStats = make(map[string]kservev2.ResponseStats, len(m.GetResponseStats()))
		for k, r := range m.GetResponseStats() {
			out.ResponseStats[k] = kservev2.ResponseStats{
				ComputeInfer:  durFromProto(r.GetComputeInfer()),
				ComputeOutput: durFromProto(r.GetComputeOutput()),
				Success:       durFromProto(r.GetSuccess()),
				Fail:          durFromProto(r.GetFail()),
				EmptyResponse: durFromProto(r.GetEmptyResponse()),
				Cancel:        durFromProto(r.GetCancel()),
			}
		}
	}
	return out
}

func shmProtoParams(s *ShmRef) map[string]*pb.InferParameter {
	return map[string]*pb.InferParameter{
		kservev2.ParamShmRegion:   {ParameterChoice: &pb.InferParameter_StringParam{StringParam: s.Region}},
		kservev2.ParamShmOffset:   {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(s.Offset)}},
		kservev2.ParamShmByteSize: {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(s.ByteSize)}},
	}
}

// inferRequestToProto builds the gRPC request; non-shm inputs travel in
// raw_input_contents, in input order.
func inferRequestToProto(req *InferRequest) (*pb.ModelInferRequest, error) {
	return new(requestProto).fill(req)
}

// requestProto is a request message with the slices it points into, so a
// caller that sends one request at a time can reuse them all.
type requestProto struct {
	m       pb.ModelInferRequest
	inputs  []*pb.ModelInferRequest_InferInputTensor
	tensors []pb.ModelInferRequest_InferInputTensor
	raws    [][]byte
}

// fill makes p's message req's; it is valid until the next fill.
func (p *requestProto) fill(req *InferRequest) (*pb.ModelInferRequest, error) {
	params, err := kservev2.ParamsToProto(req.Parameters)
	if err != nil {
		return nil, err
	}
	m := &p.m
	m.ModelName, m.ModelVersion, m.Id, m.Parameters = req.Model, req.Version, req.ID, params
	n := len(req.Inputs)
	if cap(p.tensors) < n {
		p.tensors = make([]pb.ModelInferRequest_InferInputTensor, n)
		p.inputs = make([]*pb.ModelInferRequest_InferInputTensor, n)
		p.raws = make([][]byte, 0, n)
	}
	p.tensors, p.inputs, p.raws = p.tensors[:n], p.inputs[:n], p.raws[:0]
	m.Inputs, m.RawInputContents, m.Outputs = p.inputs, nil, nil
	for i := range req.Inputs {
		in := &req.Inputs[i]
		t := &p.tensors[i]
		t.Name, t.Datatype, t.Shape, t.Parameters, t.Contents = in.Name, string(in.DataType), in.Shape, nil, nil
		if in.Shm != nil {
			t.Parameters = shmProtoParams(in.Shm)
		} else {
			p.raws = append(p.raws, in.Raw)
			m.RawInputContents = p.raws
		}
		p.inputs[i] = t
	}
	if len(req.Outputs) > 0 {
		m.Outputs = make([]*pb.ModelInferRequest_InferRequestedOutputTensor, len(req.Outputs))
		for i, o := range req.Outputs {
			t := &pb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name}
			if o.Shm != nil {
				t.Parameters = shmProtoParams(o.Shm)
			}
			m.Outputs[i] = t
		}
	}
	return m, nil
}

// inferResponseFromProto decodes raw outputs. Outputs placed in shared
// memory have no raw entry, so the raw index only advances for the others
// (unless the server sent one raw entry per output anyway).
func inferResponseFromProto(r *pb.ModelInferResponse, req *InferRequest) (*InferResponse, error) {
	out := &InferResponse{
		Model:      r.GetModelName(),
		Version:    r.GetModelVersion(),
		ID:         r.GetId(),
		Parameters: kservev2.ParamsFromProto(r.GetParameters()),
		Outputs:    make([]tensor.Tensor, len(r.GetOutputs())),
	}
	raws := r.GetRawOutputContents()
	onePerOutput := len(raws) == len(r.GetOutputs())
	ri := 0
	for i, o := range r.GetOutputs() {
		dt := tensor.DataType(o.GetDatatype())
		t := tensor.Tensor{Name: o.GetName(), DataType: dt, Shape: o.GetShape()}
		_, inShm := o.GetParameters()[kservev2.ParamShmRegion]
		inShm = inShm || requestedInShm(req, o.GetName())
		switch {
		case onePerOutput && inShm:
			// Triton's empty placeholder entry: the data is in shm.
		case onePerOutput:
			t.Raw = raws[i]
		case o.GetContents() != nil:
			raw, err := kservev2.ContentsToRaw(dt, o.GetContents())
			if err != nil {
				return nil, fmt.Errorf("output %q: %w", t.Name, err)
			}
			t.Raw = raw
		case inShm:
		case ri < len(raws):
			t.Raw = raws[ri]
			ri++
		default:
			return nil, fmt.Errorf("output %q: no raw_output_contents entry (%d entries for %d outputs)", t.Name, len(raws), len(r.GetOutputs()))
		}
		if t.Raw != nil || (!inShm && onePerOutput) {
			if t.Raw == nil {
				t.Raw = []byte{}
			}
			if err := t.Check(); err != nil {
				return nil, fmt.Errorf("output %q: %w", t.Name, err)
			}
		}
		out.Outputs[i] = t
	}
	return out, nil
}
