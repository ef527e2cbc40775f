package inputdata

import (
	"fmt"
	"math/rand/v2"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Random integers stay in a small range so arithmetic models neither
// overflow nor saturate; floats are uniform in [0, 1).
const (
	randIntSpan = 64
	randChars   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

// generate makes one batch-1 sample per input, reused for every request and
// every batch slot as perf_analyzer does (it generates once per input).
func generate(spec ModelSpec, src Source) (*sampleSet, error) {
	rng := rand.New(rand.NewPCG(uint64(src.Seed), 0x9e3779b97f4a7c15))
	step := map[string]sample{}
	for _, ts := range spec.Inputs {
		shape := dimsFor(ts, src)
		l := noLoc
		l.tensor = ts.Name
		for _, d := range shape {
			if d < 0 {
				return nil, l.errf(nil, "dims %s are variable; give a shape in the scenario", formatDims(shape))
			}
		}
		n, err := tensor.ElementCount(shape)
		if err != nil {
			return nil, l.errf(nil, "dims %s: %v", formatDims(shape), err)
		}
		raw, err := fill(ts.DataType, int(n), src, rng)
		if err != nil {
			return nil, l.errf(nil, "generating %s data: %v", ts.DataType, err)
		}
		step[ts.Name] = sample{shape: shape, raw: raw}
	}
	return &sampleSet{
		inputs:  [][]map[string]sample{{step}},
		outputs: [][]map[string]sample{{nil}},
		origins: [][]string{{src.Kind + " data"}},
		locs:    [][]loc{{noLoc}},
	}, nil
}

func fill(dt tensor.DataType, n int, src Source, rng *rand.Rand) ([]byte, error) {
	zero := src.Kind == KindZero
	switch {
	case dt == tensor.BYTES:
		elems := make([][]byte, n)
		for i := range elems {
			switch {
			case src.StringData != "":
				elems[i] = []byte(src.StringData)
			case zero:
				elems[i] = make([]byte, src.StringLength)
			default:
				b := make([]byte, src.StringLength)
				for j := range b {
					b[j] = randChars[rng.IntN(len(randChars))]
				}
				elems[i] = b
			}
		}
		return tensor.EncodeBytesElements(elems), nil
	case zero:
		return make([]byte, n*dt.Size()), nil
	case dt.IsFloat():
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.Float64()
		}
		return tensor.FromFloat64s(dt, v)
	case dt == tensor.BOOL:
		v := make([]int64, n)
		for i := range v {
			v[i] = rng.Int64N(2)
		}
		return tensor.FromInt64s(dt, v)
	case dt.IsInteger():
		lo := int64(0)
		if lo0, _ := intBounds(dt); lo0 < 0 {
			lo = -randIntSpan / 2
		}
		v := make([]int64, n)
		for i := range v {
			v[i] = lo + rng.Int64N(randIntSpan)
		}
		return tensor.FromInt64s(dt, v)
	}
	return nil, fmt.Errorf("unsupported datatype %q", dt)
}
