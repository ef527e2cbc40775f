package refserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

func simpleGRPCRequest(id string) *inferencepb.ModelInferRequest {
	in0 := make([]int32, 16)
	in1 := make([]int32, 16)
	for i := range in0 {
		in0[i], in1[i] = int32(i), 1
	}
	return &inferencepb.ModelInferRequest{
		ModelName: "simple", Id: id,
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
		RawInputContents: [][]byte{int32Bytes(in0...), int32Bytes(in1...)},
	}
}

func checkSimpleRaw(t *testing.T, resp *inferencepb.ModelInferResponse) {
	t.Helper()
	if len(resp.GetRawOutputContents()) != 2 {
		t.Fatalf("raw outputs: %d", len(resp.GetRawOutputContents()))
	}
	for i := range 16 {
		sum := int32(binary.LittleEndian.Uint32(resp.RawOutputContents[0][4*i:]))
		diff := int32(binary.LittleEndian.Uint32(resp.RawOutputContents[1][4*i:]))
		if sum != int32(i+1) || diff != int32(i-1) {
			t.Fatalf("element %d: %d, %d", i, sum, diff)
		}
	}
}

func TestGRPCSimple(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	c := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.ModelInfer(ctx, simpleGRPCRequest("a"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetId() != "a" || resp.GetModelVersion() != "1" {
		t.Errorf("id %q version %q", resp.GetId(), resp.GetModelVersion())
	}
	checkSimpleRaw(t, resp)

	// Typed contents in, raw out.
	req := simpleGRPCRequest("b")
	req.RawInputContents = nil
	for i, in := range req.Inputs {
		v := make([]int32, 16)
		for k := range v {
			v[k] = int32(k)
			if i == 1 {
				v[k] = 1
			}
		}
		in.Contents = &inferencepb.InferTensorContents{IntContents: v}
	}
	resp, err = c.ModelInfer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	checkSimpleRaw(t, resp)

	h := healthpb.NewHealthClient(grpcConn(t, s))
	hr, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v %v", hr, err)
	}
}

func TestGRPCStream(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	c := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bad := simpleGRPCRequest("bad")
	bad.Inputs[0].Shape = []int64{1, 15}
	for _, r := range []*inferencepb.ModelInferRequest{simpleGRPCRequest("ok1"), bad, simpleGRPCRequest("ok2")} {
		if err := st.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	st.CloseSend()
	got := map[string]*inferencepb.ModelStreamInferResponse{}
	for {
		m, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[m.GetInferResponse().GetId()] = m
	}
	if len(got) != 3 || got["bad"].GetErrorMessage() == "" || got["ok1"].GetErrorMessage() != "" {
		t.Fatalf("stream answers %v", got)
	}
	checkSimpleRaw(t, got["ok2"].GetInferResponse())
}

func TestGRPCErrors(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	c := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: "nope"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown model: %v (Triton: NotFound)", err)
	}
	cs, err := c.CudaSharedMemoryStatus(ctx, &inferencepb.CudaSharedMemoryStatusRequest{})
	if err != nil || len(cs.GetRegions()) != 0 {
		t.Errorf("cuda shm status: %v %v", cs, err)
	}
	_, err = c.CudaSharedMemoryRegister(ctx, &inferencepb.CudaSharedMemoryRegisterRequest{Name: "g"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "GPUs not supported") {
		t.Errorf("cuda shm register: %v", err)
	}
	_, err = c.SystemSharedMemoryStatus(ctx, &inferencepb.SystemSharedMemoryStatusRequest{Name: "x"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("shm status: %v", err)
	}
	cfg, err := c.ModelConfig(ctx, &inferencepb.ModelConfigRequest{Name: "simple"})
	if err != nil || cfg.GetConfig().GetMaxBatchSize() != 8 || len(cfg.GetConfig().GetInput()) != 2 {
		t.Errorf("config %v %v", cfg, err)
	}
	req := simpleGRPCRequest("x")
	req.RawInputContents[1] = req.RawInputContents[1][:60]
	_, err = c.ModelInfer(ctx, req)
	if status.Code(err) != codes.InvalidArgument || !bytes.Contains([]byte(err.Error()), []byte("byte size mismatch")) {
		t.Errorf("short raw input: %v", err)
	}
}
