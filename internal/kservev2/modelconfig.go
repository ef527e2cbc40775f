package kservev2

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// MarshalModelConfigJSON renders a model config the way Triton's HTTP
// endpoint does: proto field names, enum names, default-valued scalars
// present, and 64-bit integers as JSON numbers rather than proto3's strings.
func MarshalModelConfigJSON(cfg *inferencepb.ModelConfig) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding model config: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var tree map[string]any
	if err := d.Decode(&tree); err != nil {
		return nil, fmt.Errorf("re-reading model config JSON: %w", err)
	}
	unquote64(tree, cfg.ProtoReflect().Descriptor())
	return json.Marshal(tree)
}

// unquote64 walks the JSON tree alongside the message descriptor and turns
// quoted 64-bit integers back into numbers.
func unquote64(obj map[string]any, md protoreflect.MessageDescriptor) {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		v, ok := obj[string(fd.Name())]
		if !ok {
			continue
		}
		switch {
		case fd.IsMap():
			m, _ := v.(map[string]any)
			for k, e := range m {
				m[k] = fixValue(e, fd.MapValue())
			}
		case fd.IsList():
			l, _ := v.([]any)
			for j, e := range l {
				l[j] = fixValue(e, fd)
			}
		default:
			obj[string(fd.Name())] = fixValue(v, fd)
		}
	}
}

func fixValue(v any, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if s, ok := v.(string); ok {
			return json.Number(s)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if m, ok := v.(map[string]any); ok {
			unquote64(m, fd.Message())
		}
	}
	return v
}

// UnmarshalModelConfigJSON parses Triton's JSON model config. Fields this
// build does not model are ignored so newer servers stay readable.
func UnmarshalModelConfigJSON(b []byte) (*inferencepb.ModelConfig, error) {
	cfg := &inferencepb.ModelConfig{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, cfg); err != nil {
		return nil, fmt.Errorf("decoding model config JSON: %w", err)
	}
	return cfg, nil
}

// ConfigTensor is a model input or output as the config declares it. Dims
// exclude the batch dimension when MaxBatchSize > 0; -1 marks a variable dim.
type ConfigTensor struct {
	Name     string
	DataType tensor.DataType
	Dims     []int64
	Reshape  []int64 // nil when the config has no reshape
	Optional bool
}

// DynamicBatching is the part of dynamic_batching a load generator cares about.
type DynamicBatching struct {
	PreferredBatchSizes       []int32
	MaxQueueDelayMicroseconds uint64
}

// ModelConfig is a digest of a model's configuration.
type ModelConfig struct {
	Name             string
	Platform         string
	Backend          string
	MaxBatchSize     int
	Inputs           []ConfigTensor
	Outputs          []ConfigTensor
	DynamicBatching  *DynamicBatching // nil when disabled
	SequenceBatching bool
	InstanceCount    int // summed over instance groups; 0 if none listed
	Proto            *inferencepb.ModelConfig
	JSON             json.RawMessage // Triton-style JSON of Proto
}

// SummarizeModelConfig digests a config proto. It fails on tensor datatypes
// outside the protocol (TYPE_INVALID).
func SummarizeModelConfig(cfg *inferencepb.ModelConfig) (*ModelConfig, error) {
	out := &ModelConfig{
		Name:         cfg.GetName(),
		Platform:     cfg.GetPlatform(),
		Backend:      cfg.GetBackend(),
		MaxBatchSize: int(cfg.GetMaxBatchSize()),
		Proto:        cfg,
	}
	for _, in := range cfg.GetInput() {
		dt, err := DataTypeFromProto(in.GetDataType())
		if err != nil {
			return nil, fmt.Errorf("model config input %q: %w", in.GetName(), err)
		}
		ct := ConfigTensor{Name: in.GetName(), DataType: dt, Dims: in.GetDims(), Optional: in.GetOptional()}
		if in.GetReshape() != nil {
			ct.Reshape = append([]int64{}, in.GetReshape().GetShape()...)
		}
		out.Inputs = append(out.Inputs, ct)
	}
	for _, o := range cfg.GetOutput() {
		dt, err := DataTypeFromProto(o.GetDataType())
		if err != nil {
			return nil, fmt.Errorf("model config output %q: %w", o.GetName(), err)
		}
		ct := ConfigTensor{Name: o.GetName(), DataType: dt, Dims: o.GetDims()}
		if o.GetReshape() != nil {
			ct.Reshape = append([]int64{}, o.GetReshape().GetShape()...)
		}
		out.Outputs = append(out.Outputs, ct)
	}
	if db := cfg.GetDynamicBatching(); db != nil {
		out.DynamicBatching = &DynamicBatching{
			PreferredBatchSizes:       db.GetPreferredBatchSize(),
			MaxQueueDelayMicroseconds: db.GetMaxQueueDelayMicroseconds(),
		}
	}
	out.SequenceBatching = cfg.GetSequenceBatching() != nil
	for _, g := range cfg.GetInstanceGroup() {
		c := int(g.GetCount())
		if c == 0 {
			c = 1 // Triton's default count.
		}
		n := len(g.GetGpus())
		if n > 0 && g.GetKind() != inferencepb.ModelInstanceGroup_KIND_CPU {
			c *= n
		}
		out.InstanceCount += c
	}
	js, err := MarshalModelConfigJSON(cfg)
	if err != nil {
		return nil, err
	}
	out.JSON = js
	return out, nil
}
