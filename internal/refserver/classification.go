package refserver

import (
	"sort"
	"strconv"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
)

// Triton's classification extension: an output requested with the
// "classification" parameter (a count k > 0) comes back as BYTES holding,
// per batch entry, the k largest elements as "value:index", largest
// first. Built-in models have no labels, so no ":label" suffix follows.

// maxClassElements bounds what one classification sorts, as Triton does.
const maxClassElements = 1_000_000

// classify turns out into its top-k form; batched says whether the first
// dim is the batch.
func classify(o inferOutput, k int, batched bool) (inferOutput, error) {
	if !o.dtype.IsInteger() && o.dtype != tensor.FP32 && o.dtype != tensor.FP64 {
		return o, errorf(codeInvalidArg, "class result not available for output '%s' due to unsupported type '%s'", o.name, o.dtype)
	}
	vals, err := tensor.ToFloat64s(o.dtype, o.raw)
	if err != nil {
		return o, errorf(codeInternal, "output '%s': %v", o.name, err)
	}
	if len(vals) > maxClassElements {
		return o, errorf(codeInvalidArg, "classification output tensor too large")
	}
	batch := 1
	if batched && len(o.shape) > 0 {
		batch = int(o.shape[0])
	}
	per := 0
	if batch > 0 {
		per = len(vals) / batch
	}
	n := min(k, per)
	var ints []int64 // exact values for integer outputs
	if o.dtype.IsInteger() {
		if ints, err = tensor.ToInt64s(o.dtype, o.raw); err != nil {
			ints = nil
		}
	}
	var elems [][]byte
	for b := range batch {
		row := vals[b*per : (b+1)*per]
		idx := make([]int, per)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return row[idx[i]] > row[idx[j]] })
		for _, i := range idx[:n] {
			var s []byte
			switch {
			case ints != nil:
				s = strconv.AppendInt(nil, ints[b*per+i], 10)
			case o.dtype.IsInteger():
				s = strconv.AppendUint(nil, uint64(row[i]), 10) // UINT64 beyond int64
			default:
				s = strconv.AppendFloat(nil, row[i], 'f', 6, 64) // std::to_string
			}
			s = append(s, ':')
			elems = append(elems, strconv.AppendInt(s, int64(i), 10))
		}
	}
	o.dtype, o.raw = tensor.BYTES, tensor.EncodeBytesElements(elems)
	if batched {
		o.shape = []int64{int64(batch), int64(n)}
	} else {
		o.shape = []int64{int64(n)}
	}
	return o, nil
}

// classParam reads an output's classification count; 0 when absent.
func classParam(p kservev2.Parameters, name string) (int, error) {
	v, ok, err := p.Int64(kservev2.ParamClassification)
	if err != nil || (ok && v <= 0) {
		return 0, errorf(codeInvalidArg, "output '%s': parameter 'classification' must be an integer greater than 0", name)
	}
	return int(v), nil
}
