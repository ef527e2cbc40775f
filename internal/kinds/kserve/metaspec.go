package kserve

import (
	"math"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kservev2"
)

// unknownMaxBatch stands for "batches, limit not published": model metadata
// says a model takes a batch dimension but not how large it may be, so the
// server's answer to an oversized batch is the only limit.
const unknownMaxBatch = math.MaxInt32

// specFromMetadata describes a model from its metadata alone, as servers
// without the model-configuration extension publish nothing else. Triton
// and plain KServe v2 servers write a batching model's shapes with a
// leading -1; when every tensor has one it is taken as the batch
// dimension, so batch_size and shapes mean what they mean with a config
// and throughput counts samples.
func specFromMetadata(name string, md *kservev2.ModelMetadata) inputdata.ModelSpec {
	spec := inputdata.ModelSpec{Name: name}
	batched := len(md.Inputs) > 0
	for _, group := range [][]kservev2.TensorMetadata{md.Inputs, md.Outputs} {
		for _, t := range group {
			if len(t.Shape) == 0 || t.Shape[0] != -1 {
				batched = false
			}
		}
	}
	dims := func(shape []int64) []int64 {
		if batched {
			return shape[1:]
		}
		return shape
	}
	if batched {
		spec.MaxBatchSize = unknownMaxBatch
	}
	for _, t := range md.Inputs {
		spec.Inputs = append(spec.Inputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: dims(t.Shape)})
	}
	for _, t := range md.Outputs {
		spec.Outputs = append(spec.Outputs, inputdata.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: dims(t.Shape)})
	}
	return spec
}
