package conformance

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/refserver"
)

// TestGeneratedStubsSimple replays Triton's Go example client (protocol.md
// §9) with only the generated stubs and compares its printed lines.
func TestGeneratedStubsSimple(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	cc, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	c := inferencepb.NewGRPCInferenceServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var out strings.Builder
	live, err := c.ServerLive(ctx, &inferencepb.ServerLiveRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ready, err := c.ServerReady(ctx, &inferencepb.ServerReadyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "Triton Health - Live: %v\nTriton Health - Ready: %v\n", live.GetLive(), ready.GetReady())
	md, err := c.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range md.GetInputs() {
		fmt.Fprintf(&out, "input %s %s %v\n", in.GetName(), in.GetDatatype(), in.GetShape())
	}
	in0 := make([]byte, 64)
	in1 := make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(in0[4*i:], uint32(i))
		binary.LittleEndian.PutUint32(in1[4*i:], 1)
	}
	resp, err := c.ModelInfer(ctx, &inferencepb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
		RawInputContents: [][]byte{in0, in1},
	})
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString("\nChecking Inference Outputs\n--------------------------\n")
	o0, o1 := resp.GetRawOutputContents()[0], resp.GetRawOutputContents()[1]
	for i := range 16 {
		fmt.Fprintf(&out, "%d + 1 = %d\n", i, int32(binary.LittleEndian.Uint32(o0[4*i:])))
		fmt.Fprintf(&out, "%d - 1 = %d\n", i, int32(binary.LittleEndian.Uint32(o1[4*i:])))
	}
	want, err := os.ReadFile(filepath.Join("testdata", "grpc_simple_client.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Fatalf("output differs from testdata/grpc_simple_client.golden:\n%s", out.String())
	}
}
