package refserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// A load request may carry a model config ("config" parameter, JSON) that
// replaces the model's config for that load, as in Triton. Built-in models
// compute fixed functions, so the override may change how a model is served
// (max_batch_size of a batching model, instance_group counts, dynamic
// batching, parameters) but not its tensors or scheduling kind: inputs and
// outputs it lists must match the built-in's, and omitted ones are filled
// in as Triton's auto-complete would. Scheduler settings come from the
// override alone (no dynamic_batching section: none), since it is the
// whole config; a later load without one goes back to the built-in config.

// overrideModel parses cfgJSON and returns the model definition and
// parameter map to load.
func overrideModel(def *modelDef, kv map[string]string, cfgJSON string) (*modelDef, map[string]string, error) {
	var cfg inferencepb.ModelConfig
	if err := protojson.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return nil, nil, fmt.Errorf("parsing config override: %v", err)
	}
	if cfg.GetName() != "" && cfg.GetName() != def.name {
		return nil, nil, fmt.Errorf("config override names model '%s', expected '%s'", cfg.GetName(), def.name)
	}
	out := *def
	if mb := int(cfg.GetMaxBatchSize()); mb != 0 {
		// Built-ins compute row by row, so any batch limit works, but a
		// model without a batch dimension cannot gain one.
		if def.maxBatchSize == 0 || mb < 0 {
			return nil, nil, fmt.Errorf("config override max_batch_size %d: model '%s' does not batch (max_batch_size 0)", mb, def.name)
		}
		out.maxBatchSize = mb
	}
	if err := sameTensors("input", def.inputs, configInputs(cfg.GetInput())); err != nil {
		return nil, nil, err
	}
	if err := sameTensors("output", def.outputs, configOutputs(cfg.GetOutput())); err != nil {
		return nil, nil, err
	}
	if cfg.GetSequenceBatching() != nil && !def.sequence {
		return nil, nil, fmt.Errorf("config override sets sequence_batching, but model '%s' is not a sequence model", def.name)
	}
	if cfg.GetModelTransactionPolicy().GetDecoupled() != def.decoupled && cfg.GetModelTransactionPolicy() != nil {
		return nil, nil, fmt.Errorf("config override changes the decoupled transaction policy of model '%s'", def.name)
	}
	if len(cfg.GetEnsembleScheduling().GetStep()) > 0 {
		return nil, nil, fmt.Errorf("config override sets ensemble_scheduling, which built-in models do not support")
	}

	nkv := maps.Clone(kv)
	for _, k := range loadTimeParams {
		delete(nkv, k)
	}
	if groups := cfg.GetInstanceGroup(); len(groups) > 0 {
		n := 0
		for _, g := range groups {
			if g.GetKind() == inferencepb.ModelInstanceGroup_KIND_GPU {
				return nil, nil, fmt.Errorf("instance group '%s': KIND_GPU is not supported, this server has no GPUs", g.GetName())
			}
			n += max(int(g.GetCount()), 1)
		}
		nkv[ParamInstanceCount] = strconv.Itoa(n)
	}
	if db := cfg.GetDynamicBatching(); db != nil {
		nkv[ParamDynamicBatch] = "true"
		nkv[ParamMaxQueueDelay] = (time.Duration(db.GetMaxQueueDelayMicroseconds()) * time.Microsecond).String()
		var sizes []string
		for _, s := range db.GetPreferredBatchSize() {
			sizes = append(sizes, strconv.Itoa(int(s)))
		}
		nkv[ParamPreferredBatch] = strings.Join(sizes, ",")
	} else {
		nkv[ParamDynamicBatch] = "false"
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.GetParameters())) {
		nkv[k] = cfg.GetParameters()[k].GetStringValue()
	}
	return &out, nkv, nil
}

type configTensor struct {
	name string
	dt   inferencepb.DataType
	dims []int64
}

func configInputs(ins []*inferencepb.ModelInput) []configTensor {
	out := make([]configTensor, len(ins))
	for i, in := range ins {
		out[i] = configTensor{in.GetName(), in.GetDataType(), in.GetDims()}
	}
	return out
}

func configOutputs(outs []*inferencepb.ModelOutput) []configTensor {
	out := make([]configTensor, len(outs))
	for i, o := range outs {
		out[i] = configTensor{o.GetName(), o.GetDataType(), o.GetDims()}
	}
	return out
}

// sameTensors checks that every tensor the override lists is the
// built-in's, with its datatype and dims.
func sameTensors(kind string, specs []tensorSpec, given []configTensor) error {
	for _, g := range given {
		i := slices.IndexFunc(specs, func(s tensorSpec) bool { return s.name == g.name })
		if i < 0 {
			return fmt.Errorf("config override %s '%s' is not an %s of the model", kind, g.name, kind)
		}
		s := specs[i]
		dt, err := kservev2.DataTypeFromProto(g.dt)
		if err != nil || dt != s.dtype {
			return fmt.Errorf("config override %s '%s' has data type %s, the model's is %s", kind, g.name, g.dt, s.dtype.ConfigName())
		}
		if !equalShape(g.dims, s.dims) {
			return fmt.Errorf("config override %s '%s' has dims %s, the model's are %s", kind, g.name, fmtShape(g.dims), fmtShape(s.dims))
		}
	}
	return nil
}
