package refserver

import (
	"context"
	"encoding/binary"

	"math"
	"sort"
	"time"

	"github.com/perfscen/perfscen/internal/tensor"
)

// builtinModels returns the definitions of every built-in model, by name.
func builtinModels() map[string]*modelDef {
	defs := []*modelDef{
		simpleModel(),
		identityModel("identity_fp32", tensor.FP32),
		identityModel("identity_int32", tensor.INT32),
		identityModel("identity_bytes", tensor.BYTES),
		identityModel("identity_fp16", tensor.FP16),
		delayModel(),
		mlpModel("mlp_reference", mlpReference),
		mlpModel("mlp_optimized", mlpOptimized),
		accumulateModel("accumulate", 0),
		accumulateModel("accumulate_sequence", 8),
		delayFP32Model(),
	}
	defs = append(defs, tritonExampleModels()...)
	m := make(map[string]*modelDef, len(defs))
	for _, d := range defs {
		m[d.name] = d
	}
	return m
}

// BuiltinModels lists the names of the built-in models, sorted.
func BuiltinModels() []string {
	var names []string
	for n := range builtinModels() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

const builtinPlatform = "perfscen_builtin"

// simple is Triton's example model: OUTPUT0 = INPUT0+INPUT1 and
// OUTPUT1 = INPUT0-INPUT1 on INT32 [16], batching up to 8.
func simpleModel() *modelDef {
	spec := func(n string) tensorSpec { return tensorSpec{name: n, dtype: tensor.INT32, dims: []int64{16}} }
	return &modelDef{
		name: "simple", platform: builtinPlatform, maxBatchSize: 8,
		inputs:    []tensorSpec{spec("INPUT0"), spec("INPUT1")},
		outputs:   []tensorSpec{spec("OUTPUT0"), spec("OUTPUT1")},
		newEngine: func() engine { return engineFunc(simpleExecute) },
	}
}

func simpleExecute(_ context.Context, b *execBatch) ([]tensorBuf, error) {
	a, c := b.inputs[0].raw, b.inputs[1].raw
	sum := make([]byte, len(a))
	diff := make([]byte, len(a))
	for i := 0; i+4 <= len(a); i += 4 {
		x := int32(binary.LittleEndian.Uint32(a[i:]))
		y := int32(binary.LittleEndian.Uint32(c[i:]))
		binary.LittleEndian.PutUint32(sum[i:], uint32(x+y))
		binary.LittleEndian.PutUint32(diff[i:], uint32(x-y))
	}
	shape := b.inputs[0].shape
	return []tensorBuf{{shape: shape, raw: sum}, {shape: shape, raw: diff}}, nil
}

// identity models copy INPUT0 to OUTPUT0; the copy is real so the compute
// cost grows with the tensor like a model's would.
func identityModel(name string, dt tensor.DataType) *modelDef {
	return &modelDef{
		name: name, platform: builtinPlatform, maxBatchSize: 8,
		inputs:    []tensorSpec{{name: "INPUT0", dtype: dt, dims: []int64{-1}}},
		outputs:   []tensorSpec{{name: "OUTPUT0", dtype: dt, dims: []int64{-1}}},
		newEngine: func() engine { return engineFunc(copyExecute) },
	}
}

func copyExecute(_ context.Context, b *execBatch) ([]tensorBuf, error) {
	in := b.inputs[0]
	return []tensorBuf{{shape: in.shape, raw: append([]byte(nil), in.raw...)}}, nil
}

// delay copies its input after a service time of delay ± jitter.
func delayModel() *modelDef {
	return &modelDef{
		name: "delay", platform: builtinPlatform, maxBatchSize: 8, own: []string{ParamDelay, ParamJitter},
		inputs:  []tensorSpec{{name: "INPUT0", dtype: tensor.FP32, dims: []int64{-1}}},
		outputs: []tensorSpec{{name: "OUTPUT0", dtype: tensor.FP32, dims: []int64{-1}}},
		newEngine: func() engine {
			return engineFunc(func(ctx context.Context, b *execBatch) ([]tensorBuf, error) {
				if err := b.after.sleep(ctx, b.params.delay+b.jitter); err != nil {
					return nil, err
				}
				return copyExecute(ctx, b)
			})
		},
	}
}

// delay_fp32 is delay under the name and contract of the model in the
// real Triton's test repository: FP32 [16], batching up to 8 with dynamic
// batching, one service time (delay, 10 ms) per execution.
func delayFP32Model() *modelDef {
	d := delayModel()
	d.name = "delay_fp32"
	d.inputs = []tensorSpec{{name: "INPUT0", dtype: tensor.FP32, dims: []int64{16}}}
	d.outputs = []tensorSpec{{name: "OUTPUT0", dtype: tensor.FP32, dims: []int64{16}}}
	d.defaults = func(p *modelParams) { p.dynamicBatching = true }
	return d
}

// mlp models run the same two-layer perceptron with two engines.
func mlpModel(name string, run func(*mlpWeights, []float32, []float32, int, float64)) *modelDef {
	return &modelDef{
		name: name, platform: builtinPlatform, maxBatchSize: 8, own: []string{ParamSlowdown},
		inputs:  []tensorSpec{{name: "INPUT0", dtype: tensor.FP32, dims: []int64{mlpIn}}},
		outputs: []tensorSpec{{name: "OUTPUT0", dtype: tensor.FP32, dims: []int64{mlpOut}}},
		defaults: func(p *modelParams) {
			p.dynamicBatching = true
			p.maxQueueDelay = 100 * time.Microsecond
		},
		newEngine: func() engine {
			w := newMLPWeights()
			return engineFunc(func(_ context.Context, b *execBatch) ([]tensorBuf, error) {
				x := bytesToFloat32s(b.inputs[0].raw)
				y := make([]float32, b.batchSize*mlpOut)
				run(w, x, y, b.batchSize, b.params.slowdown)
				return []tensorBuf{{shape: []int64{int64(b.batchSize), mlpOut}, raw: float32sToBytes(y)}}, nil
			})
		},
	}
}

// accumulate is a sequence model: OUTPUT is the sum of INPUT over the
// requests of a sequence so far, per correlation id, wrapping at INT32.
// accumulate_sequence is the same under the name, batch size (8) and
// sequence controls (START, READY) of the model in the real Triton's test
// repository, so one scenario runs against either.
func accumulateModel(name string, maxBatch int) *modelDef {
	var controls []string
	if maxBatch > 0 {
		controls = []string{"START", "READY"}
	}
	return &modelDef{
		name: name, platform: builtinPlatform, maxBatchSize: maxBatch, sequence: true, seqControls: controls,
		inputs:  []tensorSpec{{name: "INPUT", dtype: tensor.INT32, dims: []int64{1}}},
		outputs: []tensorSpec{{name: "OUTPUT", dtype: tensor.INT32, dims: []int64{1}}},
		newEngine: func() engine {
			states := &sequenceStates{model: name}
			return engineFunc(func(_ context.Context, b *execBatch) ([]tensorBuf, error) {
				// Sequence models run one request per execution.
				v := int64(int32(binary.LittleEndian.Uint32(b.inputs[0].raw)))
				// INT32 arithmetic wraps, as in Triton's example add models;
				// perf_analyzer's random inputs overflow a running sum.
				total, err := states.step(b.jobs[0].seq, func(prev int64) int64 { return int64(int32(prev + v)) })
				if err != nil {
					return nil, err
				}
				out := binary.LittleEndian.AppendUint32(nil, uint32(int32(total)))
				return []tensorBuf{{shape: b.inputs[0].shape, raw: out}}, nil
			})
		},
	}
}

type engineFunc func(context.Context, *execBatch) ([]tensorBuf, error)

func (f engineFunc) execute(ctx context.Context, b *execBatch) ([]tensorBuf, error) { return f(ctx, b) }

func bytesToFloat32s(raw []byte) []float32 {
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func float32sToBytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}
