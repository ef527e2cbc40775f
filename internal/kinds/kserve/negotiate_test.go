package kserve

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/plan"
)

var tritonExt = []string{"sequence", "model_repository", "schedule_policy", "model_configuration",
	"system_shared_memory", "binary_tensor_data", "statistics"}

func TestNegotiate(t *testing.T) {
	httpPoint := plan.Point{ID: "m/c=1", Protocol: "http", SharedMemory: "none"}
	shmPoint := plan.Point{ID: "m/c=1,shm=system", Protocol: "http", SharedMemory: "system"}
	cases := []struct {
		name   string
		ext    []string
		format string
		points []plan.Point
		checks plan.Checks
		models []plan.Model
		// want: exit 2 naming these extensions; or else the decisions.
		missing                     []string
		noBinary, useConfig, server bool
		notes                       int
	}{
		{name: "triton, everything", ext: tritonExt, format: "auto", points: []plan.Point{httpPoint, shmPoint},
			checks: plan.Checks{Thresholds: []plan.Threshold{{Text: "server_queue < 1ms", Metric: "server_queue"}}},
			models: []plan.Model{{Alias: "m", Sequence: true}}, useConfig: true, server: true},
		{name: "plain, defaults", ext: []string{}, format: "auto", points: []plan.Point{httpPoint},
			noBinary: true, notes: 2},
		{name: "plain, json", ext: nil, format: "json", points: []plan.Point{httpPoint}, noBinary: true, notes: 2},
		{name: "plain, binary asked", ext: nil, format: "binary", points: []plan.Point{httpPoint}, missing: []string{"binary_tensor_data"}},
		{name: "plain, binary asked over grpc only", ext: nil, format: "binary", points: []plan.Point{{ID: "g", Protocol: "grpc"}}, noBinary: true, notes: 2},
		{name: "plain, server threshold", ext: nil, format: "auto", points: []plan.Point{httpPoint},
			checks:  plan.Checks{Thresholds: []plan.Threshold{{Text: "server_compute_infer < 1ms", Metric: "server_compute_infer"}}},
			missing: []string{"statistics", "server_compute_infer < 1ms"}},
		{name: "plain, server comparison", ext: nil, format: "auto", points: []plan.Point{httpPoint},
			checks:  plan.Checks{Comparisons: []plan.Comparison{{Name: "queue", Metric: "server_queue"}}},
			missing: []string{"statistics", `comparison "queue"`}},
		{name: "plain, server baseline metric", ext: nil, format: "auto", points: []plan.Point{httpPoint},
			checks:  plan.Checks{Baseline: &plan.Baseline{Metrics: []string{"throughput", "server_queue"}}},
			missing: []string{"statistics", "baseline metric server_queue"}},
		{name: "plain, client thresholds only", ext: nil, format: "auto", points: []plan.Point{httpPoint},
			checks:   plan.Checks{Thresholds: []plan.Threshold{{Text: "p99 < 1ms", Metric: "p99"}}},
			noBinary: true, notes: 2},
		{name: "plain, system shm", ext: nil, format: "auto", points: []plan.Point{httpPoint, shmPoint}, missing: []string{"system_shared_memory", shmPoint.ID}},
		{name: "triton without cuda", ext: tritonExt, format: "auto", points: []plan.Point{{ID: "c", SharedMemory: "cuda"}}, missing: []string{"cuda_shared_memory"}},
		{name: "plain, sequence", ext: nil, format: "auto", points: []plan.Point{httpPoint}, models: []plan.Model{{Alias: "acc", Sequence: true}},
			missing: []string{"sequence", "models[acc]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{Servers: []plan.Server{{Protocol: "http", TensorFormat: plan.TensorFormat(tc.format)}}, Points: tc.points, Checks: tc.checks, Models: tc.models}
			md := &kservev2.ServerMetadata{Name: "srv", Version: "1.0", Extensions: tc.ext}
			n, err := negotiate(p, md)
			if len(tc.missing) > 0 {
				if failure.KindOf(err) != failure.InvalidInput {
					t.Fatalf("err = %v (%s), want invalid input", err, failure.KindOf(err))
				}
				for _, s := range append(tc.missing, "srv 1.0") {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.noBinary != tc.noBinary || n.useConfig != tc.useConfig || n.serverStats != tc.server || len(n.notes) != tc.notes {
				t.Errorf("negotiation = %+v, want noBinary %v useConfig %v serverStats %v and %d notes", n, tc.noBinary, tc.useConfig, tc.server, tc.notes)
			}
		})
	}
}

func TestSpecFromMetadata(t *testing.T) {
	tm := func(name string, shape ...int64) kservev2.TensorMetadata {
		return kservev2.TensorMetadata{Name: name, DataType: tensor.FP32, Shape: shape}
	}
	cases := []struct {
		name     string
		md       kservev2.ModelMetadata
		maxBatch int
		in, out  []int64
	}{
		{"batching", kservev2.ModelMetadata{Inputs: []kservev2.TensorMetadata{tm("x", -1, 4)}, Outputs: []kservev2.TensorMetadata{tm("y", -1, 2)}},
			unknownMaxBatch, []int64{4}, []int64{2}},
		{"batching, outputs not published", kservev2.ModelMetadata{Inputs: []kservev2.TensorMetadata{tm("x", -1, 4)}},
			unknownMaxBatch, []int64{4}, nil},
		{"fixed leading dim", kservev2.ModelMetadata{Inputs: []kservev2.TensorMetadata{tm("x", 1, 4)}, Outputs: []kservev2.TensorMetadata{tm("y", -1, 2)}},
			0, []int64{1, 4}, []int64{-1, 2}},
		{"one input without a leading -1", kservev2.ModelMetadata{Inputs: []kservev2.TensorMetadata{tm("x", -1, 4), tm("z", 3)}},
			0, []int64{-1, 4}, nil},
		{"scalar", kservev2.ModelMetadata{Inputs: []kservev2.TensorMetadata{tm("x")}}, 0, []int64{}, nil},
	}
	for _, tc := range cases {
		spec := specFromMetadata("m", &tc.md)
		if spec.MaxBatchSize != tc.maxBatch || !slices.Equal(spec.Inputs[0].Dims, tc.in) {
			t.Errorf("%s: max batch %d, input dims %v; want %d, %v", tc.name, spec.MaxBatchSize, spec.Inputs[0].Dims, tc.maxBatch, tc.in)
		}
		if tc.out != nil && !slices.Equal(spec.Outputs[0].Dims, tc.out) {
			t.Errorf("%s: output dims %v, want %v", tc.name, spec.Outputs[0].Dims, tc.out)
		}
	}
}
