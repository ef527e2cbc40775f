package refserver

import (
	"context"
	"encoding/binary"
	"strconv"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Triton's example models (server docs/examples/model_repository and the
// models its QA and client examples use), under their names and with their
// contracts, so Triton's clients and perf_analyzer run against this server
// unchanged. Integer arithmetic wraps as the ONNX models' does.

func tritonExampleModels() []*modelDef {
	return []*modelDef{
		addSubModel("simple_int8", tensor.INT8, addSubInt8),
		addSubModel("simple_string", tensor.BYTES, addSubString),
		identityModel("simple_identity", tensor.BYTES),
		customIdentityInt32Model(),
		sequenceModel("simple_sequence", false),
		sequenceModel("simple_dyna_sequence", true),
		stringDynaSequenceModel(),
		repeatInt32Model(),
	}
}

// addSubModel is simple's contract on another datatype: OUTPUT0 =
// INPUT0+INPUT1, OUTPUT1 = INPUT0-INPUT1 on [16], batching up to 8.
func addSubModel(name string, dt tensor.DataType, fn func(a, b []byte) (sum, diff []byte, err error)) *modelDef {
	spec := func(n string) tensorSpec { return tensorSpec{name: n, dtype: dt, dims: []int64{16}} }
	return &modelDef{
		name: name, platform: builtinPlatform, maxBatchSize: 8,
		inputs:  []tensorSpec{spec("INPUT0"), spec("INPUT1")},
		outputs: []tensorSpec{spec("OUTPUT0"), spec("OUTPUT1")},
		newEngine: func() engine {
			return engineFunc(func(_ context.Context, b *execBatch) ([]tensorBuf, error) {
				sum, diff, err := fn(b.inputs[0].raw, b.inputs[1].raw)
				if err != nil {
					return nil, err
				}
				shape := b.inputs[0].shape
				return []tensorBuf{{shape: shape, raw: sum}, {shape: shape, raw: diff}}, nil
			})
		},
	}
}

func addSubInt8(a, c []byte) ([]byte, []byte, error) {
	sum, diff := make([]byte, len(a)), make([]byte, len(a))
	for i := range a {
		sum[i] = byte(int8(a[i]) + int8(c[i]))
		diff[i] = byte(int8(a[i]) - int8(c[i]))
	}
	return sum, diff, nil
}

// addSubString reads each element as a decimal INT32, as the example's
// model casts its strings, and answers decimal strings.
func addSubString(a, c []byte) ([]byte, []byte, error) {
	xs, err := decimalInt32s("INPUT0", a)
	if err != nil {
		return nil, nil, err
	}
	ys, err := decimalInt32s("INPUT1", c)
	if err != nil {
		return nil, nil, err
	}
	sum := make([][]byte, len(xs))
	diff := make([][]byte, len(xs))
	for i := range xs {
		sum[i] = strconv.AppendInt(nil, int64(xs[i]+ys[i]), 10)
		diff[i] = strconv.AppendInt(nil, int64(xs[i]-ys[i]), 10)
	}
	return tensor.EncodeBytesElements(sum), tensor.EncodeBytesElements(diff), nil
}

func decimalInt32s(name string, raw []byte) ([]int32, error) {
	elems, err := tensor.BytesElements(raw)
	if err != nil {
		return nil, errorf(codeInvalidArg, "input '%s': %v", name, err)
	}
	out := make([]int32, len(elems))
	for i, e := range elems {
		v, err := strconv.ParseInt(string(e), 10, 32)
		if err != nil {
			return nil, errorf(codeInvalidArg, "input '%s' element %d: %q is not a decimal INT32", name, i, e)
		}
		out[i] = int32(v)
	}
	return out, nil
}

// custom_identity_int32 is the identity backend's model from Triton's QA
// (perf_analyzer's and the client timeout tests' target): INT32 [-1],
// batching up to 1024.
func customIdentityInt32Model() *modelDef {
	d := identityModel("custom_identity_int32", tensor.INT32)
	d.maxBatchSize = 1024
	return d
}

// sequenceModel is simple_sequence (direct strategy, START and READY
// controls) or simple_dyna_sequence (oldest strategy, START, END, READY and
// CORRID controls). Their ONNX models are not accumulators: OUTPUT is
// INPUT + START, and the dyna model adds the correlation ID on the
// request that ends the sequence. Triton's sequence batcher still refuses
// a sequence whose first request lacks START.
func sequenceModel(name string, dyna bool) *modelDef {
	controls := []string{"START", "READY"}
	if dyna {
		controls = []string{"START", "END", "READY", "CORRID"}
	}
	return &modelDef{
		name: name, platform: builtinPlatform, maxBatchSize: 8, sequence: true,
		seqOldest: dyna, seqControls: controls,
		inputs:  []tensorSpec{{name: "INPUT", dtype: tensor.INT32, dims: []int64{1}}},
		outputs: []tensorSpec{{name: "OUTPUT", dtype: tensor.INT32, dims: []int64{1}}},
		newEngine: func() engine {
			states := &sequenceStates{model: name}
			return engineFunc(func(_ context.Context, b *execBatch) ([]tensorBuf, error) {
				seq := b.jobs[0].seq
				var corrid int32
				if dyna && seq.end {
					id, err := strconv.ParseUint(seq.id, 10, 64)
					if err != nil {
						return nil, errorf(codeInvalidArg, "model '%s' expects a UINT64 correlation ID for its CORRID control, got %q", name, seq.id)
					}
					corrid = int32(id)
				}
				if _, err := states.step(seq, func(int64) int64 { return 0 }); err != nil {
					return nil, err
				}
				var start int32
				if seq.start {
					start = 1
				}
				in := b.inputs[0].raw
				out := make([]byte, len(in))
				for i := 0; i+4 <= len(in); i += 4 {
					v := int32(binary.LittleEndian.Uint32(in[i:]))
					binary.LittleEndian.PutUint32(out[i:], uint32(v+start+corrid))
				}
				return []tensorBuf{{shape: b.inputs[0].shape, raw: out}}, nil
			})
		},
	}
}

// simple_string_dyna_sequence is what Triton's QA makes of
// simple_dyna_sequence for string correlation IDs (the dyna_sequence custom
// backend, CORRID of TYPE_STRING), which the sequence examples run with
// -d: OUTPUT accumulates INPUT over the sequence, and the request that
// ends it adds its correlation ID, which must then be a decimal integer.
func stringDynaSequenceModel() *modelDef {
	d := sequenceModel("simple_string_dyna_sequence", true)
	d.seqStringID = true
	d.newEngine = func() engine {
		states := &sequenceStates{model: d.name}
		return engineFunc(func(_ context.Context, b *execBatch) ([]tensorBuf, error) {
			seq := b.jobs[0].seq
			var corrid int64
			if seq.end {
				id, err := strconv.ParseInt(seq.id, 10, 64)
				if err != nil {
					return nil, errorf(codeInvalidArg, "model '%s' adds the correlation ID at the end of a sequence and needs it to be a decimal integer, got %q", d.name, seq.id)
				}
				corrid = id
			}
			in := b.inputs[0].raw
			v := int64(int32(binary.LittleEndian.Uint32(in)))
			total, err := states.step(seq, func(prev int64) int64 { return int64(int32(prev + v)) })
			if err != nil {
				return nil, err
			}
			out := binary.LittleEndian.AppendUint32(nil, uint32(int32(total+corrid)))
			return []tensorBuf{{shape: b.inputs[0].shape, raw: out}}, nil
		})
	}
	return d
}
