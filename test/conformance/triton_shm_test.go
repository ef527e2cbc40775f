//go:build linux

package conformance

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/refserver"
)

// Triton answers one raw_output_contents entry per output, empty for an
// output written to shared memory; perf_analyzer's client indexes the list
// by output and aborts when an entry is missing.
func TestGRPCShmOutputsKeepRawEntries(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	key, _ := createShm(t, "rawentries", 64)
	if _, err := c.SystemSharedMemoryRegister(ctx, &inferencepb.SystemSharedMemoryRegisterRequest{Name: "out", Key: key, ByteSize: 64}); err != nil {
		t.Fatal(err)
	}
	a := seq(16, func(i int) int32 { return int32(i) })
	req := simpleGRPCRequest(a, a)
	req.Outputs = []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{
		{Name: "OUTPUT0", Parameters: map[string]*inferencepb.InferParameter{
			"shared_memory_region": strParam("out"), "shared_memory_byte_size": int64Param(64)}},
		{Name: "OUTPUT1"},
	}
	resp, err := c.ModelInfer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	raw := resp.GetRawOutputContents()
	if len(resp.GetOutputs()) != 2 || len(raw) != 2 || len(raw[0]) != 0 || len(raw[1]) != 64 {
		t.Fatalf("outputs %d, raw entries %d (sizes %v)", len(resp.GetOutputs()), len(raw), lens(raw))
	}
	// The empty entry must be on the wire, not only in this process.
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var back inferencepb.ModelInferResponse
	if err := proto.Unmarshal(b, &back); err != nil || len(back.GetRawOutputContents()) != 2 {
		t.Fatalf("after a round trip: %d entries, %v", len(back.GetRawOutputContents()), err)
	}
}

func lens(bs [][]byte) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = len(b)
	}
	return out
}
