package refserver

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// accumulateCall is a gRPC request to accumulate for sequence 7.
func accumulateCall(v int32, start, end bool) *inferencepb.ModelInferRequest {
	return &inferencepb.ModelInferRequest{
		ModelName: "accumulate",
		Parameters: map[string]*inferencepb.InferParameter{
			"sequence_id":    {ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: 7}},
			"sequence_start": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: start}},
			"sequence_end":   {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: end}},
		},
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1}}},
		RawInputContents: [][]byte{int32Bytes(v)},
	}
}

// perf_analyzer's end of run: it sends a sequence's START, and, with the
// START still in flight, the sequence's END on the same connection (it
// ends its open sequences as it exits). The server takes them in the
// order they arrived, as Triton does: the END is not refused for lack of
// a START, however the goroutines serving the two calls are scheduled.
// The START's handling is held until the END has reached the server and
// been parsed, the order in which the race went wrong; with a call
// outside the sequence (another model, an unknown one) arriving between
// them, which must not be held up.
func TestSequenceEndRightAfterStartKeepsArrivalOrder(t *testing.T) {
	startArrived, endArrived := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := startServer(t, Options{Models: []string{"accumulate", "simple"}, inferArrived: func(r *inferRequest) {
		switch {
		case r.seq.active() && r.seq.start:
			close(startArrived)
			<-endArrived
		case r.seq.active() && r.seq.end:
			once.Do(func() { close(endArrived) })
		}
	}})
	c := grpcClient(t, s)
	ctx := t.Context()
	type reply struct {
		resp *inferencepb.ModelInferResponse
		err  error
	}
	started := make(chan reply, 1)
	go func() {
		resp, err := c.ModelInfer(ctx, accumulateCall(5, true, false))
		started <- reply{resp, err}
	}()
	<-startArrived
	// Calls outside the sequence go through while the START is held.
	if _, err := c.ModelInfer(ctx, simpleGRPCRequest("other")); err != nil {
		t.Fatalf("a call outside the sequence: %v", err)
	}
	if _, err := c.ModelInfer(ctx, &inferencepb.ModelInferRequest{ModelName: "nosuch"}); err == nil {
		t.Fatal("an unknown model was served")
	}
	resp, err := c.ModelInfer(ctx, accumulateCall(3, false, true))
	if err != nil {
		t.Fatalf("the END after an unanswered START: %v", err)
	}
	if got := int32(binary.LittleEndian.Uint32(resp.GetRawOutputContents()[0])); got != 8 {
		t.Errorf("END's running sum %d, want 8 (START's 5 first)", got)
	}
	if r := <-started; r.err != nil {
		t.Fatalf("START: %v", r.err)
	} else if got := int32(binary.LittleEndian.Uint32(r.resp.GetRawOutputContents()[0])); got != 5 {
		t.Errorf("START's running sum %d, want 5", got)
	}
}

// Tickets: a call waits for the calls ahead of it, not for those after;
// passing twice, or out of order, is harmless.
func TestArrivals(t *testing.T) {
	a := newArrivals()
	t0, t1, t2 := a.take(), a.take(), a.take()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := t0.wait(ctx); err != nil {
		t.Errorf("the first call waited: %v", err)
	}
	if err := t2.wait(ctx); err == nil {
		t.Error("the third call did not wait for two calls ahead of it")
	}
	t2.pass()
	t1.pass()
	t1.pass()
	if err := t2.wait(ctx); err == nil {
		t.Error("the third call did not wait for the first")
	}
	t0.pass()
	if err := t2.wait(ctx); err != nil {
		t.Errorf("every call ahead passed, still waiting: %v", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.low != 3 || len(a.passed) != 0 {
		t.Errorf("low %d, %d kept", a.low, len(a.passed))
	}
	if (ticket{}).wait(ctx) != nil {
		t.Error("a call without arrivals waited")
	}
}
