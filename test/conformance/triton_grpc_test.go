package conformance

import (
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// Cases replaying what Triton's own clients (perf_analyzer, tritonclient)
// send over gRPC, checked against Triton's behaviour.

func stubs(t *testing.T, s *refserver.Server, opts ...grpc.DialOption) inferencepb.GRPCInferenceServiceClient {
	t.Helper()
	cc, err := grpc.NewClient(s.GRPCAddr(), append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return inferencepb.NewGRPCInferenceServiceClient(cc)
}

func boolParam(b bool) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: b}}
}

func int64Param(v int64) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: v}}
}

func strParam(v string) *inferencepb.InferParameter {
	return &inferencepb.InferParameter{ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: v}}
}

func simpleGRPCRequest(a, b []int32) *inferencepb.ModelInferRequest {
	return &inferencepb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{i32(a...), i32(b...)},
	}
}

func int32sOf(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// perf_analyzer's C++ client sets triton_enable_empty_final_response on
// every gRPC request; Triton accepts that key (as a bool) and no other
// triton_* key.
func TestGRPCReservedParameters(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	ones := seq(16, func(int) int32 { return 1 })
	req := simpleGRPCRequest(ones, ones)
	req.Parameters = map[string]*inferencepb.InferParameter{"triton_enable_empty_final_response": boolParam(true)}
	if _, err := c.ModelInfer(ctx, req); err != nil {
		t.Fatalf("request with triton_enable_empty_final_response: %v", err)
	}
	for name, p := range map[string]map[string]*inferencepb.InferParameter{
		"other triton_ key":       {"triton_other": boolParam(true)},
		"allowed key, wrong type": {"triton_enable_empty_final_response": int64Param(1)},
	} {
		req.Parameters = p
		_, err := c.ModelInfer(ctx, req)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	req.Parameters = map[string]*inferencepb.InferParameter{"triton_other": boolParam(true)}
	if _, err := c.ModelInfer(ctx, req); err == nil || !strings.Contains(err.Error(), "triton_enable_empty_final_response") {
		t.Errorf("refusal should list the allowed key: %v", err)
	}
}

// Over HTTP every triton_* request key is refused, as in Triton.
func TestHTTPReservedParameters(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	body := `{"parameters":{"triton_enable_empty_final_response":true},"inputs":[` +
		`{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},` +
		`{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`
	r := post(t, s, "/v2/models/simple/infer", nil, []byte(body))
	if r.status != 400 || !strings.Contains(string(r.body), "reserved for Triton usage") {
		t.Errorf("got %d %s", r.status, r.body)
	}
}

// Requests of sequences pipelined on one stream (Triton's stream sequence
// example) reach the model in stream order: the running sums come out
// right and no sequence misses its START.
func TestStreamPipelinedSequences(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"accumulate", "simple_sequence"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	stream, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const perSeq = 25
	ids := []int64{1000, 1001, 1002}
	want := map[string]int32{}
	sums := map[int64]int32{}
	n := 0
	for step := range perSeq {
		for k, id := range ids {
			v := int32(step*7 + k + 1)
			sums[id] += v
			rid := strings.Join([]string{"acc", string(rune('a' + k)), string(rune('A' + step))}, "_")
			want[rid] = sums[id]
			err := stream.Send(&inferencepb.ModelInferRequest{
				ModelName: "accumulate", Id: rid,
				Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1}}},
				RawInputContents: [][]byte{i32(v)},
				Parameters: map[string]*inferencepb.InferParameter{
					"sequence_id": int64Param(id), "sequence_start": boolParam(step == 0), "sequence_end": boolParam(step == perSeq-1),
					"triton_enable_empty_final_response": boolParam(true),
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	// simple_sequence with a string correlation ID: OUTPUT = INPUT + START.
	for step, v := range []int32{20, -11, -7} {
		rid := "str_" + string(rune('A'+step))
		want[rid] = v
		if step == 0 {
			want[rid] = v + 1
		}
		err := stream.Send(&inferencepb.ModelInferRequest{
			ModelName: "simple_sequence", Id: rid,
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
			RawInputContents: [][]byte{i32(v)},
			Parameters: map[string]*inferencepb.InferParameter{
				"sequence_id": strParam("6f1c2c1e-uuid"), "sequence_start": boolParam(step == 0), "sequence_end": boolParam(step == 2),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	got := 0
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.GetErrorMessage() != "" {
			t.Fatalf("request %s: %s", r.GetInferResponse().GetId(), r.GetErrorMessage())
		}
		ir := r.GetInferResponse()
		if v := int32sOf(ir.GetRawOutputContents()[0])[0]; v != want[ir.GetId()] {
			t.Errorf("request %s: output %d, want %d", ir.GetId(), v, want[ir.GetId()])
		}
		if f := ir.GetParameters()["triton_final_response"]; !f.GetBoolParam() {
			t.Errorf("request %s: triton_final_response %v, want true", ir.GetId(), f)
		}
		got++
	}
	if got != n {
		t.Errorf("%d responses for %d requests", got, n)
	}
}

// Triton accepts gzip and deflate message compression (perf_analyzer -C).
func TestGRPCCompression(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	for _, alg := range []string{"gzip", "deflate"} {
		t.Run(alg, func(t *testing.T) {
			c := stubs(t, s)
			a := seq(16, func(i int) int32 { return int32(i) })
			resp, err := c.ModelInfer(ctxT(t), simpleGRPCRequest(a, a), grpc.UseCompressor(alg))
			if err != nil {
				t.Fatal(err)
			}
			if got := int32sOf(resp.GetRawOutputContents()[0]); got[15] != 30 {
				t.Errorf("OUTPUT0 %v", got)
			}
		})
	}
}

// Without GPUs Triton lists no CUDA regions and unregisters nothing
// successfully; only register fails.
func TestGRPCCudaSharedMemoryWithoutGPU(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	st, err := c.CudaSharedMemoryStatus(ctx, &inferencepb.CudaSharedMemoryStatusRequest{})
	if err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("status: %v %v", st, err)
	}
	if _, err := c.CudaSharedMemoryUnregister(ctx, &inferencepb.CudaSharedMemoryUnregisterRequest{}); err != nil {
		t.Errorf("unregister all: %v", err)
	}
	if _, err := c.CudaSharedMemoryUnregister(ctx, &inferencepb.CudaSharedMemoryUnregisterRequest{Name: "output_data"}); err != nil {
		t.Errorf("unregister one: %v", err)
	}
	_, err = c.CudaSharedMemoryRegister(ctx, &inferencepb.CudaSharedMemoryRegisterRequest{Name: "output_data", RawHandle: make([]byte, 64), ByteSize: 64})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "GPUs not supported") {
		t.Errorf("register: %v", err)
	}
	_, err = c.CudaSharedMemoryStatus(ctx, &inferencepb.CudaSharedMemoryStatusRequest{Name: "output_data"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("status of an unknown region: %v", err)
	}
}

// repeat_int32 answers one response per IN element on a stream, each
// marked not final, then the empty final response when asked for; unary
// calls are refused as in Triton.
func TestDecoupledRepeatInt32(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"repeat_int32"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	req := func(id string, in []int32) *inferencepb.ModelInferRequest {
		u32 := func(v ...uint32) []byte {
			b := make([]byte, 4*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint32(b[4*i:], x)
			}
			return b
		}
		return &inferencepb.ModelInferRequest{
			ModelName: "repeat_int32", Id: id,
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
				{Name: "IN", Datatype: "INT32", Shape: []int64{int64(len(in))}},
				{Name: "DELAY", Datatype: "UINT32", Shape: []int64{int64(len(in))}},
				{Name: "WAIT", Datatype: "UINT32", Shape: []int64{1}},
			},
			Outputs:          []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUT"}, {Name: "IDX"}},
			RawInputContents: [][]byte{i32(in...), u32(make([]uint32, len(in))...), u32(0)},
			Parameters:       map[string]*inferencepb.InferParameter{"triton_enable_empty_final_response": boolParam(true)},
		}
	}
	if _, err := c.ModelInfer(ctx, req("unary", []int32{1})); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "decoupled") {
		t.Errorf("unary call: %v", err)
	}
	stream, err := c.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(req("r1", []int32{100, 101, 102, 103})); err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(req("r0", nil)); err != nil {
		t.Fatal(err)
	}
	stream.CloseSend()
	outs := map[string][]int32{}
	idx := map[string][]int32{}
	finals := map[string]int{}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.GetErrorMessage() != "" {
			t.Fatal(r.GetErrorMessage())
		}
		ir := r.GetInferResponse()
		final := ir.GetParameters()["triton_final_response"].GetBoolParam()
		if final {
			finals[ir.GetId()]++
			if len(ir.GetOutputs()) != 0 {
				t.Errorf("final response of %s carries outputs", ir.GetId())
			}
			continue
		}
		if finals[ir.GetId()] > 0 {
			t.Errorf("response of %s after its final response", ir.GetId())
		}
		outs[ir.GetId()] = append(outs[ir.GetId()], int32sOf(ir.GetRawOutputContents()[0])...)
		idx[ir.GetId()] = append(idx[ir.GetId()], int32sOf(ir.GetRawOutputContents()[1])...)
	}
	if !slices.Equal(outs["r1"], []int32{100, 101, 102, 103}) || !slices.Equal(idx["r1"], []int32{0, 1, 2, 3}) {
		t.Errorf("r1: OUT %v IDX %v", outs["r1"], idx["r1"])
	}
	if len(outs["r0"]) != 0 || finals["r0"] != 1 || finals["r1"] != 1 {
		t.Errorf("r0 outputs %v; finals %v", outs["r0"], finals)
	}
}

// Triton's dyna sequence model adds the correlation ID on the request
// that ends the sequence.
func TestDynaSequenceContract(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple_dyna_sequence"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	var got []int32
	vals := []int32{0, 11, 7, 1}
	for i, v := range vals {
		resp, err := c.ModelInfer(ctx, &inferencepb.ModelInferRequest{
			ModelName:        "simple_dyna_sequence",
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
			RawInputContents: [][]byte{i32(v)},
			Parameters: map[string]*inferencepb.InferParameter{
				"sequence_id": int64Param(1000), "sequence_start": boolParam(i == 0), "sequence_end": boolParam(i == len(vals)-1),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, int32sOf(resp.GetRawOutputContents()[0])...)
	}
	if want := []int32{1, 11, 7, 1001}; !slices.Equal(got, want) {
		t.Errorf("outputs %v, want %v", got, want)
	}
	_, err := c.ModelInfer(ctx, &inferencepb.ModelInferRequest{
		ModelName:        "simple_dyna_sequence",
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
		RawInputContents: [][]byte{i32(1)},
		Parameters:       map[string]*inferencepb.InferParameter{"sequence_id": int64Param(7)},
	})
	if err == nil || !strings.Contains(err.Error(), "START") {
		t.Errorf("sequence without START: %v", err)
	}
}

// The classification extension: an output asked for with a class count
// comes back as BYTES "value:index", largest first, per batch entry.
func TestClassification(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple"}})
	want := []string{"16:15", "15:14", "14:13"}
	a := seq(16, func(i int) int32 { return int32(i) })
	ones := seq(16, func(int) int32 { return 1 })
	t.Run("grpc", func(t *testing.T) {
		req := simpleGRPCRequest(a, ones)
		req.Outputs = []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{
			{Name: "OUTPUT0", Parameters: map[string]*inferencepb.InferParameter{"classification": int64Param(3)}}}
		resp, err := stubs(t, s).ModelInfer(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		out := resp.GetOutputs()[0]
		elems, err := tensor.BytesElements(resp.GetRawOutputContents()[0])
		if err != nil || out.GetDatatype() != "BYTES" || !slices.Equal(out.GetShape(), []int64{1, 3}) || len(elems) != 3 {
			t.Fatalf("output %v, elements %q, %v", out, elems, err)
		}
		for i, e := range elems {
			if string(e) != want[i] {
				t.Errorf("class %d = %q, want %q", i, e, want[i])
			}
		}
		req.Outputs[0].Parameters["classification"] = boolParam(true)
		if _, err := stubs(t, s).ModelInfer(ctxT(t), req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("bool class count: %v", err)
		}
	})
	t.Run("http", func(t *testing.T) {
		body := `{"inputs":[` +
			`{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},` +
			`{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}],` +
			`"outputs":[{"name":"OUTPUT0","parameters":{"classification":3,"binary_data":false}}]}`
		r := post(t, s, "/v2/models/simple/infer", nil, []byte(body))
		if r.status != 200 || !strings.Contains(string(r.body), `"shape":[1,3],"datatype":"BYTES","data":["16:15","15:14","14:13"]`) {
			t.Errorf("got %d %s", r.status, r.body)
		}
	})
}

// simple_string_dyna_sequence accumulates and adds its (decimal string)
// correlation ID on the request that ends the sequence.
func TestStringDynaSequenceContract(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple_string_dyna_sequence"}})
	c := stubs(t, s)
	ctx := ctxT(t)
	var got []int32
	vals := []int32{20, -11, -7, -1}
	for i, v := range vals {
		resp, err := c.ModelInfer(ctx, &inferencepb.ModelInferRequest{
			ModelName:        "simple_string_dyna_sequence",
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "INPUT", Datatype: "INT32", Shape: []int64{1, 1}}},
			RawInputContents: [][]byte{i32(v)},
			Parameters: map[string]*inferencepb.InferParameter{
				"sequence_id": strParam("1002"), "sequence_start": boolParam(i == 0), "sequence_end": boolParam(i == len(vals)-1),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, int32sOf(resp.GetRawOutputContents()[0])...)
	}
	if want := []int32{20, 9, 2, 1 + 1002}; !slices.Equal(got, want) {
		t.Errorf("outputs %v, want %v", got, want)
	}
}
