package client

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// grpcMessage frames a protobuf message with gRPC's 5-byte prefix.
func grpcMessage(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return h2test.Message(b)
}

// simpleReplyMsg is the simple model's reply to simpleRequest.
func simpleReplyMsg(t testing.TB) []byte {
	sum, diff, _ := addSub(simpleRequest("").Inputs[0].Raw, simpleRequest("").Inputs[1].Raw)
	return grpcMessage(t, &pb.ModelInferResponse{
		ModelName: "simple", ModelVersion: "1",
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{
			{Name: "OUTPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "OUTPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawOutputContents: [][]byte{sum, diff},
	})
}
