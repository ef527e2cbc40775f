package refserver

import (
	"context"
	"testing"

	"github.com/perfscen/perfscen/internal/tensor"
)

// The core serves other kinds' front-ends the same models, with the same
// validation and statistics as the KServe front-end.
func TestCoreInfer(t *testing.T) {
	s, err := New(Options{Models: []string{"simple"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, ok := s.Model("simple")
	if !ok || info.MaxBatchSize == 0 || len(info.Inputs) != 2 || info.Inputs[0].DataType != tensor.INT32 {
		t.Fatalf("Model(simple) = %+v, %v", info, ok)
	}
	if got := s.Models(); len(got) != 1 || got[0].Name != "simple" {
		t.Fatalf("Models = %+v", got)
	}
	ones := make([]int32, 16)
	for i := range ones {
		ones[i] = int32(i)
	}
	in := func(name string) tensor.Tensor {
		return tensor.Tensor{Name: name, DataType: tensor.INT32, Shape: []int64{1, 16}, Raw: tensor.EncodeInt32s(ones)}
	}
	resp, err := s.Infer(context.Background(), &Request{Model: "simple", Inputs: []tensor.Tensor{in("INPUT0"), in("INPUT1")}, Outputs: []string{"OUTPUT0"}})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := tensor.DecodeInt32s(resp.Outputs[0].Raw)
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT0" || sum[5] != 10 {
		t.Fatalf("outputs = %+v (%v)", resp.Outputs, sum)
	}
	if st := s.Statistics(); len(st) != 1 || st[0].InferenceCount != 1 {
		t.Fatalf("statistics = %+v", st)
	}
	cases := []struct {
		req  Request
		code Code
	}{
		{Request{Model: "nope"}, NotFound},
		{Request{Model: "simple", Inputs: []tensor.Tensor{in("INPUT0")}}, InvalidArgument},
		{Request{Model: "simple", Inputs: []tensor.Tensor{in("INPUT0"), in("INPUT1")}, Outputs: []string{"X"}}, InvalidArgument},
	}
	for _, c := range cases {
		if _, err := s.Infer(context.Background(), &c.req); err == nil || CodeOf(err) != c.code {
			t.Errorf("Infer(%+v) = %v (code %v), want code %v", c.req, err, CodeOf(err), c.code)
		}
	}
}

// A front-end reads a model's instance count (its workers, say) and each
// request's wait for an instance.
func TestCoreInstancesAndQueue(t *testing.T) {
	s, err := New(Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{"delay": {"instance_count": "3", "delay": "0s"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if info, _ := s.Model("delay"); info.Instances != 3 {
		t.Errorf("Model(delay).Instances = %d, want 3", info.Instances)
	}
	if m := s.Models(); len(m) != 1 || m[0].Instances != 3 {
		t.Errorf("Models() = %+v", m)
	}
	in := tensor.Tensor{Name: "INPUT0", DataType: tensor.FP32, Shape: []int64{1, 1}, Raw: tensor.EncodeFloat32s([]float32{1})}
	resp, err := s.Infer(context.Background(), &Request{Model: "delay", Inputs: []tensor.Tensor{in}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Queue < 0 {
		t.Errorf("queue time %v", resp.Queue)
	}
}
