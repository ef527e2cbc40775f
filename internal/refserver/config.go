package refserver

import (
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// serverExtensions is what server metadata reports, in Triton's order.
var serverExtensions = []string{
	"classification", "sequence", "model_repository", "model_repository(unload_dependents)",
	"schedule_policy", "model_configuration", "system_shared_memory",
	"cuda_shared_memory", "binary_tensor_data", "parameters", "statistics",
}

// modelConfig renders the model's Triton config, with the scheduler
// settings it was loaded with.
func (m *loadedModel) modelConfig() *inferencepb.ModelConfig {
	d := m.def
	p := m.params.Load()
	pol := m.policy(p)
	cfg := &inferencepb.ModelConfig{
		Name:         d.name,
		Platform:     d.platform,
		Backend:      "perfscen",
		MaxBatchSize: int32(d.maxBatchSize),
		VersionPolicy: &inferencepb.ModelVersionPolicy{
			PolicyChoice: &inferencepb.ModelVersionPolicy_Latest_{Latest: &inferencepb.ModelVersionPolicy_Latest{NumVersions: 1}},
		},
		InstanceGroup: []*inferencepb.ModelInstanceGroup{{
			Name: d.name + "_0", Count: int32(pol.instances), Kind: inferencepb.ModelInstanceGroup_KIND_CPU,
		}},
		Parameters: map[string]*inferencepb.ModelParameter{},
	}
	for _, in := range d.inputs {
		cfg.Input = append(cfg.Input, &inferencepb.ModelInput{Name: in.name, DataType: kservev2.DataTypeProto(in.dtype), Dims: in.dims})
	}
	for _, out := range d.outputs {
		cfg.Output = append(cfg.Output, &inferencepb.ModelOutput{Name: out.name, DataType: kservev2.DataTypeProto(out.dtype), Dims: out.dims})
	}
	if d.decoupled {
		cfg.ModelTransactionPolicy = &inferencepb.ModelTransactionPolicy{Decoupled: true}
	}
	switch {
	case d.sequence:
		cfg.SchedulingChoice = &inferencepb.ModelConfig_SequenceBatching{SequenceBatching: sequenceConfig(d)}
	case pol.dynamic:
		db := &inferencepb.ModelDynamicBatching{MaxQueueDelayMicroseconds: uint64(pol.delay.Microseconds())}
		for _, s := range pol.preferred {
			db.PreferredBatchSize = append(db.PreferredBatchSize, int32(s))
		}
		cfg.SchedulingChoice = &inferencepb.ModelConfig_DynamicBatching{DynamicBatching: db}
	}
	m.entryParams(func(k, v string) {
		cfg.Parameters[k] = &inferencepb.ModelParameter{StringValue: v}
	})
	return cfg
}

// entryParams reports the parameters the model was given, for its config.
func (m *loadedModel) entryParams(fn func(k, v string)) {
	for k, v := range m.kv {
		fn(k, v)
	}
}

// metadata is the model's KServe metadata; batching models get a leading
// -1 batch dimension.
func (m *loadedModel) metadata() kservev2.ModelMetadata {
	d := m.def
	md := kservev2.ModelMetadata{Name: d.name, Versions: []string{modelVersion}, Platform: d.platform}
	conv := func(specs []tensorSpec) []kservev2.TensorMetadata {
		out := make([]kservev2.TensorMetadata, len(specs))
		for i, s := range specs {
			shape := s.dims
			if d.maxBatchSize > 0 {
				shape = append([]int64{-1}, s.dims...)
			}
			out[i] = kservev2.TensorMetadata{Name: s.name, DataType: s.dtype, Shape: shape}
		}
		return out
	}
	md.Inputs, md.Outputs = conv(d.inputs), conv(d.outputs)
	return md
}

// sequenceConfig is the sequence_batching section: the strategy and the
// control inputs the model declares (Triton's example configs).
func sequenceConfig(d *modelDef) *inferencepb.ModelSequenceBatching {
	sb := &inferencepb.ModelSequenceBatching{
		MaxSequenceIdleMicroseconds: 1_000_000,
		StrategyChoice:              &inferencepb.ModelSequenceBatching_Direct{Direct: &inferencepb.ModelSequenceBatching_StrategyDirect{}},
	}
	if d.seqOldest {
		sb.StrategyChoice = &inferencepb.ModelSequenceBatching_Oldest{Oldest: &inferencepb.ModelSequenceBatching_StrategyOldest{
			MaxCandidateSequences: 1024, MaxQueueDelayMicroseconds: 10_000,
		}}
	}
	kinds := map[string]inferencepb.ModelSequenceBatching_Control_Kind{
		"START": inferencepb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_START,
		"END":   inferencepb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_END,
		"READY": inferencepb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY,
	}
	for _, name := range d.seqControls {
		c := &inferencepb.ModelSequenceBatching_Control{}
		if name == "CORRID" {
			c.Kind = inferencepb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID
			c.DataType = inferencepb.DataType_TYPE_UINT64
			if d.seqStringID {
				c.DataType = inferencepb.DataType_TYPE_STRING
			}
		} else {
			c.Kind = kinds[name]
			c.Int32FalseTrue = []int32{0, 1}
		}
		sb.ControlInput = append(sb.ControlInput, &inferencepb.ModelSequenceBatching_ControlInput{Name: name, Control: []*inferencepb.ModelSequenceBatching_Control{c}})
	}
	return sb
}
