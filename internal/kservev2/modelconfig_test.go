package kservev2

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func TestModelConfigJSONRoundTrip(t *testing.T) {
	raw, err := os.ReadFile("testdata/simple_config.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := UnmarshalModelConfigJSON(raw)
	if err != nil {
		t.Fatalf("testdata/simple_config.json: %v", err)
	}
	sum, err := SummarizeModelConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := &ModelConfig{
		Name: "simple", Platform: "onnxruntime_onnx", Backend: "onnxruntime", MaxBatchSize: 8,
		Inputs: []ConfigTensor{
			{Name: "INPUT0", DataType: tensor.INT32, Dims: []int64{16}},
			{Name: "INPUT1", DataType: tensor.BYTES, Dims: []int64{-1}, Reshape: []int64{4, -1}},
		},
		Outputs:         []ConfigTensor{{Name: "OUTPUT0", DataType: tensor.FP16, Dims: []int64{16}}},
		DynamicBatching: &DynamicBatching{PreferredBatchSizes: []int32{4, 8}, MaxQueueDelayMicroseconds: 100},
		InstanceCount:   2*2 + 3,
	}
	if diff := cmp.Diff(want, sum, cmpIgnoreRaw); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// Triton's rendering: 64-bit integers as numbers, defaults present.
	var tree map[string]any
	if err := json.Unmarshal(sum.JSON, &tree); err != nil {
		t.Fatal(err)
	}
	in0 := tree["input"].([]any)[0].(map[string]any)
	if _, isNum := in0["dims"].([]any)[0].(float64); !isNum {
		t.Errorf("dims rendered as %T, want a JSON number", in0["dims"].([]any)[0])
	}
	db := tree["dynamic_batching"].(map[string]any)
	if db["max_queue_delay_microseconds"] != float64(100) {
		t.Errorf("max_queue_delay_microseconds = %#v", db["max_queue_delay_microseconds"])
	}
	if in0["data_type"] != "TYPE_INT32" || in0["is_shape_tensor"] != false {
		t.Errorf("input rendered as %v", in0)
	}
	if tree["max_batch_size"] != float64(8) {
		t.Errorf("max_batch_size = %#v", tree["max_batch_size"])
	}
	again, err := UnmarshalModelConfigJSON(sum.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(again, cfg) {
		t.Errorf("re-parsed config differs:\n%v\n%v", again, cfg)
	}
}

var cmpIgnoreRaw = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.String()
	return s == "Proto" || s == "JSON"
}, cmp.Ignore())

func TestSummarizeSequenceAndDefaults(t *testing.T) {
	cfg := &inferencepb.ModelConfig{
		Name: "seq",
		SchedulingChoice: &inferencepb.ModelConfig_SequenceBatching{
			SequenceBatching: &inferencepb.ModelSequenceBatching{},
		},
		InstanceGroup: []*inferencepb.ModelInstanceGroup{{}},
	}
	sum, err := SummarizeModelConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.SequenceBatching || sum.DynamicBatching != nil || sum.InstanceCount != 1 {
		t.Errorf("summary = %+v", sum)
	}
	if !bytes.Contains(sum.JSON, []byte(`"sequence_batching":{`)) {
		t.Errorf("JSON lacks sequence_batching: %s", sum.JSON)
	}
	bad := &inferencepb.ModelConfig{Input: []*inferencepb.ModelInput{{Name: "x"}}}
	if _, err := SummarizeModelConfig(bad); err == nil {
		t.Error("TYPE_INVALID input accepted")
	}
}

func TestUnmarshalModelConfigJSONErrors(t *testing.T) {
	for _, s := range []string{`{`, `{"max_batch_size":"x"}`, `{"input":[{"dims":"x"}]}`} {
		if _, err := UnmarshalModelConfigJSON([]byte(s)); err == nil {
			t.Errorf("accepted %s", s)
		}
	}
	// Unknown enum names are dropped for forward compatibility, but the
	// summary refuses a tensor whose type it cannot name.
	cfg, err := UnmarshalModelConfigJSON([]byte(`{"input":[{"name":"x","data_type":"TYPE_NOPE"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SummarizeModelConfig(cfg); err == nil {
		t.Error("summary accepted an unknown data_type")
	}
}
