package prom

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exposition = `# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-a"} 0.5
nv_gpu_utilization{gpu_uuid="GPU-b"} 0.25
# TYPE ts_inference_requests_total counter
ts_inference_requests_total{model_name="tiny",model_version="default",hostname="h"} 12
ts_inference_requests_total{model_name="tiny",model_version="1.0",hostname="h"} 3
# TYPE :tensorflow:serving:request_latency histogram
:tensorflow:serving:request_latency_bucket{model_name="m",API="predict",entrypoint="GRPC",le="10"} 1
:tensorflow:serving:request_latency_bucket{model_name="m",API="predict",entrypoint="GRPC",le="+Inf"} 4
:tensorflow:serving:request_latency_sum{model_name="m",API="predict",entrypoint="GRPC"} 1234.5
:tensorflow:serving:request_latency_count{model_name="m",API="predict",entrypoint="GRPC"} 4
untyped_thing{a="x \"q\" \\ \n"} 7 1700000000000
`

func TestParse(t *testing.T) {
	list, err := Parse(strings.NewReader(exposition), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := Sum(list, "nv_gpu_utilization", nil); !ok || got != 0.75 {
		t.Errorf("gpu utilization sum = %v, %v", got, ok)
	}
	if got, ok := Sum(list, "ts_inference_requests_total", map[string]string{"model_name": "tiny"}); !ok || got != 15 {
		t.Errorf("requests = %v, %v", got, ok)
	}
	if got, ok := Sum(list, ":tensorflow:serving:request_latency_count", map[string]string{"entrypoint": "GRPC"}); !ok || got != 4 {
		t.Errorf("histogram count = %v, %v", got, ok)
	}
	if got, ok := Sum(list, ":tensorflow:serving:request_latency_bucket", map[string]string{"le": "+Inf"}); !ok || got != 4 {
		t.Errorf("+Inf bucket = %v, %v", got, ok)
	}
	if got, _ := Sum(list, "untyped_thing", map[string]string{"a": "x \"q\" \\ \n"}); got != 7 {
		t.Errorf("escaped label value: %v", got)
	}
	if _, ok := Sum(list, "missing", nil); ok {
		t.Error("a missing metric summed")
	}
}

func TestParseKeep(t *testing.T) {
	list, err := Parse(strings.NewReader(exposition), func(n string) bool { return strings.HasPrefix(n, "nv_") })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"nv_gpu_utilization", "nv_gpu_utilization"}, names); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"metric{a=\"x\" 1\n",        // unterminated labels
		"metric 1 2 3\n",            // too many fields
		"metric notanumber\n",       // bad value
		"# TYPE m counter\nm{} x\n", // bad counter value
	} {
		if _, err := Parse(strings.NewReader(in), nil); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(exposition)
	f.Add("a 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		list, err := Parse(strings.NewReader(in), nil)
		if err != nil && list != nil {
			t.Fatalf("samples returned with error %v", err)
		}
	})
}
