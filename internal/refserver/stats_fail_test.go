package refserver

import (
	"context"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// Triton rejects a request that fails normalization before it is queued and
// records no statistics for it; only requests accepted for execution that
// then fail (here an injected error_rate fault) count in inference_stats.fail.
func TestStatisticsFailCountsOnlyAcceptedRequests(t *testing.T) {
	mutate := func(f func(r *inferencepb.ModelInferRequest)) *inferencepb.ModelInferRequest {
		r := simpleGRPCRequest("x")
		f(r)
		return r
	}
	rejected := []struct {
		name string
		http string
		grpc *inferencepb.ModelInferRequest
	}{
		{"wrong shape",
			`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,3],"data":[1,2,3]},{"name":"INPUT1","datatype":"INT32","shape":[1,3],"data":[1,2,3]}]}`,
			mutate(func(r *inferencepb.ModelInferRequest) {
				r.Inputs[0].Shape, r.Inputs[1].Shape = []int64{1, 3}, []int64{1, 3}
				r.RawInputContents = [][]byte{int32Bytes(1, 2, 3), int32Bytes(1, 2, 3)}
			})},
		{"wrong datatype",
			`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,16],"data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}`,
			mutate(func(r *inferencepb.ModelInferRequest) { r.Inputs[0].Datatype = "FP32" })},
		{"batch over max_batch_size",
			`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[9,16],"data":[]},{"name":"INPUT1","datatype":"INT32","shape":[9,16],"data":[]}]}`,
			mutate(func(r *inferencepb.ModelInferRequest) {
				r.Inputs[0].Shape, r.Inputs[1].Shape = []int64{9, 16}, []int64{9, 16}
			})},
		{"missing input",
			`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}]}`,
			mutate(func(r *inferencepb.ModelInferRequest) {
				r.Inputs, r.RawInputContents = r.Inputs[:1], r.RawInputContents[:1]
			})},
		{"byte size mismatch",
			`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[1]},{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[1]}]}`,
			mutate(func(r *inferencepb.ModelInferRequest) { r.RawInputContents[0] = int32Bytes(1) })},
		{"malformed request",
			`{"inputs":[`,
			mutate(func(r *inferencepb.ModelInferRequest) { r.RawInputContents = nil })},
	}
	s := startServer(t, Options{Models: []string{"simple"}})
	c := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			if rep := do(t, s, "POST", "/v2/models/simple/infer", nil, []byte(tc.http)); rep.status != 400 {
				t.Fatalf("HTTP status %d: %s", rep.status, rep.body)
			}
			if _, err := c.ModelInfer(ctx, tc.grpc); err == nil {
				t.Fatal("gRPC request accepted")
			}
			if f := statsOf(t, s, "simple").InferenceStats.Fail.Count; f != 0 {
				t.Fatalf("fail count %d, want 0", f)
			}
		})
	}
	if err := s.SetModelParameter("simple", "error_rate", "1"); err != nil {
		t.Fatal(err)
	}
	if rep := do(t, s, "POST", "/v2/models/simple/infer", nil, simpleJSONBody(t)); rep.status != 500 {
		t.Fatalf("injected fault over HTTP: %d %s", rep.status, rep.body)
	}
	if _, err := c.ModelInfer(ctx, simpleGRPCRequest("f")); err == nil {
		t.Fatal("injected fault over gRPC answered")
	}
	st := statsOf(t, s, "simple").InferenceStats
	if st.Fail.Count != 2 || st.Success.Count != 0 {
		t.Fatalf("after two injected faults: fail %d success %d, want 2 and 0", st.Fail.Count, st.Success.Count)
	}
}
