package refserver

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

func delayGRPCRequest(id string, v float32) *inferencepb.ModelInferRequest {
	raw := make([]byte, 8)
	binary.LittleEndian.PutUint32(raw, math.Float32bits(v))
	binary.LittleEndian.PutUint32(raw[4:], math.Float32bits(-v))
	return &inferencepb.ModelInferRequest{ModelName: "delay", Id: id,
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 2}}},
		RawInputContents: [][]byte{raw}}
}

// streamAll pipelines reqs on one stream, then reads every answer.
func streamAll(t *testing.T, s *Server, reqs []*inferencepb.ModelInferRequest) []*inferencepb.ModelStreamInferResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := grpcClient(t, s).ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := st.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []*inferencepb.ModelStreamInferResponse
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
}

// Eight instances with jittered service times finish requests out of
// order; the answers, in-stream errors included, must still come back in
// the order the requests were sent.
func TestGRPCStreamAnswersInRequestOrder(t *testing.T) {
	s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{
		"delay": {"delay": "2ms", "jitter": "2ms", "instance_count": "8", "seed": "7"}}})
	const n = 200
	var reqs []*inferencepb.ModelInferRequest
	wantErr := map[int]bool{}
	for i := range n {
		r := delayGRPCRequest(fmt.Sprintf("r%03d", i), float32(i))
		switch i {
		case 60:
			r.ModelName = "no_such_model"
			wantErr[i] = true
		case 130:
			r.Inputs[0].Shape = []int64{1, 3}
			wantErr[i] = true
		}
		reqs = append(reqs, r)
	}
	got := streamAll(t, s, reqs)
	if len(got) != n {
		t.Fatalf("%d answers for %d requests", len(got), n)
	}
	misplaced := 0
	for i, m := range got {
		if id := m.GetInferResponse().GetId(); id != reqs[i].GetId() {
			misplaced++
			if misplaced <= 5 {
				t.Errorf("answer %d has id %s, want %s", i, id, reqs[i].GetId())
			}
			continue
		}
		if (m.GetErrorMessage() != "") != wantErr[i] {
			t.Errorf("answer %d (%s): error %q", i, reqs[i].GetId(), m.GetErrorMessage())
		}
		if wantErr[i] {
			continue
		}
		out := m.GetInferResponse().GetRawOutputContents()
		if len(out) != 1 || math.Float32frombits(binary.LittleEndian.Uint32(out[0])) != float32(i) {
			t.Errorf("answer %d: outputs %v", i, out)
		}
	}
	if misplaced > 0 {
		t.Errorf("%d of %d answers out of request order", misplaced, n)
	}
}

// Ordering the answers must not serialize execution: pipelined stream
// requests still reach the dynamic batcher together.
func TestGRPCStreamStillBatches(t *testing.T) {
	s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{
		"delay": {"delay": "5ms", "dynamic_batching": "true", "max_queue_delay": "20ms", "instance_count": "1"}}})
	const n = 32
	var reqs []*inferencepb.ModelInferRequest
	for i := range n {
		reqs = append(reqs, delayGRPCRequest(fmt.Sprint(i), float32(i)))
	}
	got := streamAll(t, s, reqs)
	for i, m := range got {
		if m.GetErrorMessage() != "" || m.GetInferResponse().GetId() != fmt.Sprint(i) {
			t.Fatalf("answer %d: id %s error %q", i, m.GetInferResponse().GetId(), m.GetErrorMessage())
		}
	}
	st := statsOf(t, s, "delay")
	if st.InferenceStats.Success.Count != n || st.ExecutionCount >= n {
		t.Fatalf("success %d executions %d: want %d requests merged into fewer executions",
			st.InferenceStats.Success.Count, st.ExecutionCount, n)
	}
}

func TestStreamOrderReleasesInPlaceOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complete []int // places in completion order
		skip     int   // place answered with nil (dropped), -1 none
		want     []int
	}{
		{"in order", []int{0, 1, 2, 3}, -1, []int{0, 1, 2, 3}},
		{"reversed", []int{3, 2, 1, 0}, -1, []int{0, 1, 2, 3}},
		{"interleaved", []int{1, 0, 3, 2}, -1, []int{0, 1, 2, 3}},
		{"nil does not block", []int{2, 1, 3, 0}, 1, []int{0, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent []int
			o := newStreamOrder(func(v *int) { sent = append(sent, *v) })
			for range tc.complete {
				o.reserve()
			}
			for _, p := range tc.complete {
				v := p
				if p == tc.skip {
					o.done(uint64(p), nil)
					continue
				}
				o.done(uint64(p), &v)
			}
			if fmt.Sprint(sent) != fmt.Sprint(tc.want) {
				t.Fatalf("sent %v, want %v", sent, tc.want)
			}
		})
	}
}
