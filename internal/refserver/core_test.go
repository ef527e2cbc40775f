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
