package inputdata

import (
	"slices"

	"github.com/perfscen/perfscen/internal/tensor"
)

// assemble turns batch-1 samples into requests using perf_analyzer's rule:
// without streams, request k batches steps (k·B + i) mod T for i < B; within
// a stream, request j batches steps (j + i) mod L. So batch size 1 sends each
// step once per round, and larger batches take consecutive steps.
func assemble(spec ModelSpec, src Source, set *sampleSet) (*Data, error) {
	d := &Data{Sequences: set.streamed, BatchSize: src.BatchSize}
	b := src.BatchSize
	for si, steps := range set.inputs {
		n := len(steps)
		reqs := make([]Step, n)
		for j := range reqs {
			first := j
			if !set.streamed {
				first = j * b % n
			}
			idx := make([]int, b)
			for i := range idx {
				idx[i] = (first + i) % n
			}
			st, err := batchStep(spec, set, si, idx)
			if err != nil {
				return nil, err
			}
			reqs[j] = st
		}
		d.Streams = append(d.Streams, reqs)
	}
	return d, nil
}

func batchStep(spec ModelSpec, set *sampleSet, stream int, idx []int) (Step, error) {
	st := Step{Origin: set.origins[stream][idx[0]]}
	for _, ts := range spec.Inputs {
		t, ok, err := batchTensor(spec, ts, set, set.inputs[stream], stream, idx, false)
		if err != nil {
			return Step{}, err
		}
		if ok {
			st.Inputs = append(st.Inputs, t)
		}
	}
	for _, ts := range spec.Outputs {
		t, ok, err := batchTensor(spec, ts, set, set.outputs[stream], stream, idx, true)
		if err != nil {
			return Step{}, err
		}
		if ok {
			st.Expected = append(st.Expected, t)
		}
	}
	return st, nil
}

// batchTensor concatenates one tensor's samples for the batch. A tensor must
// be present in all of the batch's steps or in none, with one shape.
func batchTensor(spec ModelSpec, ts TensorSpec, set *sampleSet, steps []map[string]sample, stream int, idx []int, validation bool) (tensor.Tensor, bool, error) {
	first, ok := steps[idx[0]][ts.Name]
	for _, k := range idx[1:] {
		s, has := steps[k][ts.Name]
		l := set.locs[stream][k]
		l.validation, l.tensor = validation, ts.Name
		switch {
		case has != ok:
			return tensor.Tensor{}, false, l.errf(nil, "cannot batch with step %d: the tensor is given in only one of them",
				set.locs[stream][idx[0]].step)
		case ok && !slices.Equal(s.shape, first.shape):
			return tensor.Tensor{}, false, l.errf(nil, "cannot batch shape %s with shape %s of step %d",
				formatDims(s.shape), formatDims(first.shape), set.locs[stream][idx[0]].step)
		}
	}
	if !ok {
		return tensor.Tensor{}, false, nil
	}
	t := tensor.Tensor{Name: ts.Name, DataType: ts.DataType, Shape: first.shape, Raw: first.raw}
	if spec.MaxBatchSize > 0 {
		t.Shape = append([]int64{int64(len(idx))}, first.shape...)
	}
	if len(idx) > 1 {
		size := 0
		for _, k := range idx {
			size += len(steps[k][ts.Name].raw)
		}
		raw := make([]byte, 0, size)
		for _, k := range idx {
			raw = append(raw, steps[k][ts.Name].raw...)
		}
		t.Raw = raw
	}
	return t, true, nil
}
