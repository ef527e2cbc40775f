package plan

import (
	"fmt"
	"testing"
)

func TestStageLevel(t *testing.T) {
	tests := []struct {
		st   Stage
		n    int
		conc bool
		want string
	}{
		{Stage{From: 0, To: 8}, 4, true, "[2 4 6 8]"},
		{Stage{From: 0, To: 3}, 4, true, "[1 2 3 3]"}, // rounded up, never 0
		{Stage{From: 8, To: 2}, 3, true, "[6 4 2]"},
		{Stage{From: 4, To: 4}, 2, true, "[4 4]"},
		{Stage{From: 10, To: 20}, 4, false, "[12.5 15 17.5 20]"},
	}
	for _, tc := range tests {
		var got []float64
		for i := 0; i < tc.n; i++ {
			got = append(got, tc.st.Level(i, tc.n, tc.conc))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%+v over %d windows: %v, want %s", tc.st, tc.n, got, tc.want)
		}
	}
}

// A probe is the template at another level: its own id and coordinates,
// the template untouched.
func TestSearchProbe(t *testing.T) {
	s := Search{Name: "max_concurrency@p99<50ms", Model: "trt", Metric: MetricMaxConcurrency,
		Template: Point{ID: "trt/c=1", Model: "trt", Load: Load{Mode: LoadConcurrency, Concurrency: 1},
			Coords: map[string]string{"concurrency": "1", "protocol": "grpc"}}}
	p := s.Probe(12)
	if p.ID != "trt/max_concurrency@p99<50ms/c=12" || p.Load.Concurrency != 12 || p.Search != s.Name ||
		p.Coords["concurrency"] != "12" || p.Coords["search"] != s.Name || p.Coords["protocol"] != "grpc" {
		t.Errorf("probe: %+v", p)
	}
	if s.Template.Coords["concurrency"] != "1" || s.Template.Load.Concurrency != 1 {
		t.Errorf("the template changed: %+v", s.Template)
	}
	r := Search{Name: "max_request_rate@p99<30ms", Model: "onnx", Metric: MetricMaxRequestRate,
		Template: Point{Load: Load{Mode: LoadRequestRate, Rate: 10}, Coords: map[string]string{"request_rate": "10"}}}
	if p := r.Probe(12.5); p.ID != "onnx/max_request_rate@p99<30ms/r=12.5" || p.Load.Rate != 12.5 || p.Coords["request_rate"] != "12.5" {
		t.Errorf("rate probe: %+v", p)
	}
	if r.PointID() != "onnx/max_request_rate@p99<30ms" {
		t.Errorf("point id %s", r.PointID())
	}
}
