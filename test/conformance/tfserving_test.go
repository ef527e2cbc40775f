package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protoenc "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/perfscen/perfscen/internal/inputdata"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/kinds/tfserving"
	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/runner/plan"
)

// A TF Serving stand-in built from the TensorFlow Serving protos alone
// (PredictionService, ModelService), on loopback. It records the bytes of
// every Predict request as they came off the wire, so the test can hold
// what perfscen sends against an encoding assembled by hand from
// upstream's field numbers: tfservingpb's generated code is not trusted
// to check itself.
type fakeTFServing struct {
	pb.UnimplementedPredictionServiceServer
	pb.UnimplementedModelServiceServer
	sigs *pb.SignatureDefMap

	mu  sync.Mutex
	raw [][]byte
}

// recordingCodec is the proto codec, keeping a copy of each
// PredictRequest's bytes.
type recordingCodec struct{ f *fakeTFServing }

func (c recordingCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2(protoenc.Name).Marshal(v)
}

func (c recordingCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*pb.PredictRequest); ok {
		c.f.mu.Lock()
		c.f.raw = append(c.f.raw, data.Materialize())
		c.f.mu.Unlock()
	}
	return encoding.GetCodecV2(protoenc.Name).Unmarshal(data, v)
}

func (c recordingCodec) Name() string { return protoenc.Name }

func (f *fakeTFServing) GetModelStatus(_ context.Context, req *pb.GetModelStatusRequest) (*pb.GetModelStatusResponse, error) {
	return &pb.GetModelStatusResponse{ModelVersionStatus: []*pb.ModelVersionStatus{
		{Version: 2, State: pb.ModelVersionStatus_END, Status: &pb.StatusProto{}},
		{Version: 3, State: pb.ModelVersionStatus_AVAILABLE, Status: &pb.StatusProto{}},
	}}, nil
}

func (f *fakeTFServing) GetModelMetadata(_ context.Context, req *pb.GetModelMetadataRequest) (*pb.GetModelMetadataResponse, error) {
	a, err := anypb.New(f.sigs)
	if err != nil {
		return nil, err
	}
	return &pb.GetModelMetadataResponse{ModelSpec: req.GetModelSpec(), Metadata: map[string]*anypb.Any{"signature_def": a}}, nil
}

// Predict answers y = 2x and label "ok" in the typed fields, as TF
// Serving's default AsProtoField does.
func (f *fakeTFServing) Predict(_ context.Context, req *pb.PredictRequest) (*pb.PredictResponse, error) {
	x := req.GetInputs()["x"].GetTensorContent()
	y := make([]float32, len(x)/4)
	for i := range y {
		y[i] = 2 * math.Float32frombits(binary.LittleEndian.Uint32(x[4*i:]))
	}
	shape := func(d ...int64) *pb.TensorShapeProto {
		s := &pb.TensorShapeProto{}
		for _, v := range d {
			s.Dim = append(s.Dim, &pb.TensorShapeProto_Dim{Size: v})
		}
		return s
	}
	return &pb.PredictResponse{ModelSpec: req.GetModelSpec(), Outputs: map[string]*pb.TensorProto{
		"y":     {Dtype: pb.DataType_DT_FLOAT, TensorShape: shape(1, int64(len(y))), FloatVal: y},
		"label": {Dtype: pb.DataType_DT_STRING, TensorShape: shape(1, 1), StringVal: [][]byte{[]byte("ok")}},
	}}, nil
}

// sigDef is serving_default with the inputs given as alias → dtype,
// inner dims; every tensor leads with the batch dimension -1.
func sigDef(inputs map[string]pb.DataType, dims map[string][]int64) *pb.SignatureDefMap {
	ti := func(dt pb.DataType, d []int64) *pb.TensorInfo {
		s := &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dim{{Size: -1}}}
		for _, v := range d {
			s.Dim = append(s.Dim, &pb.TensorShapeProto_Dim{Size: v})
		}
		return &pb.TensorInfo{Dtype: dt, TensorShape: s}
	}
	def := &pb.SignatureDef{Inputs: map[string]*pb.TensorInfo{}, MethodName: "tensorflow/serving/predict", Outputs: map[string]*pb.TensorInfo{
		"y": ti(pb.DataType_DT_FLOAT, []int64{3}), "label": ti(pb.DataType_DT_STRING, []int64{1}),
	}}
	for name, dt := range inputs {
		def.Inputs[name] = ti(dt, dims[name])
	}
	return &pb.SignatureDefMap{SignatureDef: map[string]*pb.SignatureDef{"serving_default": def}}
}

// Hand-assembled protobuf: tag, then the value, with the field numbers of
// tensorflow_serving/apis/predict.proto and model.proto and
// tensorflow/core/framework/tensor.proto, tensor_shape.proto, types.proto.
func field(num protowire.Number, msg []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), msg)
}

func varint(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// tensorBytes is a TensorProto: dtype (1), tensor_shape (2: dim 2 { size
// 1 }), then its values: tensor_content (4) or string_val (8) entries.
func tensorBytes(dtype uint64, shape []int64, values ...[]byte) []byte {
	var sh []byte
	for _, d := range shape {
		sh = append(sh, field(2, varint(1, uint64(d)))...)
	}
	return cat(varint(1, dtype), field(2, sh), cat(values...))
}

// splitFields cuts a message into its top-level fields' bytes.
func splitFields(t *testing.T, b []byte) map[protowire.Number][][]byte {
	t.Helper()
	out := map[protowire.Number][][]byte{}
	for len(b) > 0 {
		num, _, n := protowire.ConsumeField(b)
		if n < 0 {
			t.Fatalf("malformed message: %v", protowire.ParseError(n))
		}
		out[num] = append(out[num], b[:n])
		b = b[n:]
	}
	return out
}

// mustBytesField is the payload of a length-delimited field.
func mustBytesField(t *testing.T, f []byte) []byte {
	t.Helper()
	_, typ, n := protowire.ConsumeTag(f)
	if n < 0 || typ != protowire.BytesType {
		t.Fatalf("not a length-delimited field: %x", f)
	}
	v, m := protowire.ConsumeBytes(f[n:])
	if m < 0 {
		t.Fatalf("truncated field: %x", f)
	}
	return v
}

func sortedBytes(l [][]byte) [][]byte {
	l = slices.Clone(l)
	slices.SortFunc(l, bytes.Compare)
	return l
}

func le32f(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func le64(v ...int64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

// tfPlan is a plan of model m with the JSON input data file, concurrency
// 1, one point over proto.
func tfPlan(srv plan.Server, proto plan.Protocol, data string) *plan.Plan {
	srv.Kind, srv.Protocol, srv.Timeout, srv.TensorFormat = "tfserving", proto, 10*time.Second, plan.TensorAuto
	m := plan.Model{Alias: "m", Name: "m", Version: "3", Validate: true, Input: plan.Input{Kind: "json", Paths: []string{data}}}
	return &plan.Plan{Servers: []plan.Server{srv}, Models: []plan.Model{m}, Points: []plan.Point{{ID: "m/c=1", Model: "m", Protocol: proto,
		SharedMemory: plan.ShmNone, BatchSize: 1, Load: plan.Load{Mode: plan.LoadConcurrency, Concurrency: 1}}}}
}

// sendOne opens the plan's server through the tfserving kind, as a run
// does, and sends its first request with validation.
func sendOne(t *testing.T, p *plan.Plan) *kinds.Outcome {
	t.Helper()
	s, err := tfserving.Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pt, err := s.Point(context.Background(), &p.Points[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := pt.NewCaller(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	step := pt.Data().Streams[0][0]
	start := time.Now()
	out := &kinds.Outcome{}
	c.Call(context.Background(), func() time.Duration { return time.Since(start) }, &kinds.Request{Step: inputdata.Request{Step: &step}, Check: true}, out)
	return out
}

// What perfscen sends to TF Serving's gRPC Predict, byte for byte: the
// model spec (name, version 3 as an Int64Value, the signature), one map
// entry per input (key, then a TensorProto with numeric values in
// tensor_content and strings in string_val, DT_HALF included in
// tensor_content as TensorFlow's own clients send it), and nothing else.
// The typed-field reply is decoded and validated against the data's
// validation outputs.
func TestTFServingGRPCWire(t *testing.T) {
	fake := &fakeTFServing{sigs: sigDef(
		map[string]pb.DataType{"x": pb.DataType_DT_FLOAT, "ids": pb.DataType_DT_INT64, "flag": pb.DataType_DT_BOOL, "text": pb.DataType_DT_STRING, "h": pb.DataType_DT_HALF},
		map[string][]int64{"x": {3}, "ids": {2}, "flag": {1}, "text": {2}, "h": {2}})}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(recordingCodec{fake}))
	pb.RegisterPredictionServiceServer(srv, fake)
	pb.RegisterModelServiceServer(srv, fake)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	out := sendOne(t, tfPlan(plan.Server{URL: lis.Addr().String()}, plan.ProtocolGRPC, "testdata/tfserving/grpc_data.json"))
	if out.Err != nil || !out.Checked || out.Mismatch != "" {
		t.Fatalf("outcome %+v", out)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.raw) != 1 {
		t.Fatalf("%d Predict requests, want 1", len(fake.raw))
	}
	got := splitFields(t, fake.raw[0])
	// ModelSpec: name (1), version (2: Int64Value value 1), signature_name (3).
	wantSpec := field(1, cat(field(1, []byte("m")), field(2, varint(1, 3)), field(3, []byte("serving_default"))))
	entry := func(key string, tensor []byte) []byte { return field(2, cat(field(1, []byte(key)), field(2, tensor))) }
	const dtFloat, dtInt64, dtBool, dtString, dtHalf = 1, 9, 10, 7, 19
	wantInputs := [][]byte{
		entry("x", tensorBytes(dtFloat, []int64{1, 3}, field(4, le32f(0.5, 1, -2)))),
		entry("ids", tensorBytes(dtInt64, []int64{1, 2}, field(4, le64(1, -2)))),
		entry("flag", tensorBytes(dtBool, []int64{1, 1}, field(4, []byte{1}))),
		entry("text", tensorBytes(dtString, []int64{1, 2}, field(8, []byte("hello")), field(8, []byte("wörld")))),
		entry("h", tensorBytes(dtHalf, []int64{1, 2}, field(4, []byte{0x00, 0x3c, 0x00, 0xc0}))),
	}
	if len(got) != 2 || len(got[1]) != 1 {
		t.Fatalf("top-level fields %v, want model_spec (1) once and inputs (2)", got)
	}
	// Protobuf lets fields come in any order (protobuf-go writes a oneof
	// member, the version, after the plain fields): each field of the
	// model spec must be exact, in whatever order.
	gotSpec := splitFields(t, mustBytesField(t, got[1][0]))
	wantSpecFields := splitFields(t, mustBytesField(t, wantSpec))
	if len(gotSpec) != len(wantSpecFields) {
		t.Errorf("model_spec fields %x, want %x", got[1][0], wantSpec)
	}
	for num, w := range wantSpecFields {
		if g := gotSpec[num]; !slices.EqualFunc(g, w, bytes.Equal) {
			t.Errorf("model_spec field %d: got %x, want %x", num, g, w)
		}
	}
	// Map entries travel in any order; each must be exact.
	if g, w := sortedBytes(got[2]), sortedBytes(wantInputs); !slices.EqualFunc(g, w, bytes.Equal) {
		t.Errorf("inputs:\n got %x\nwant %x", g, w)
	}
}

// What perfscen sends to TF Serving's REST API, byte for byte, in both
// request formats, after reading the model's status and metadata in TF
// Serving's own JSON; the reply is decoded and validated.
func TestTFServingRESTWire(t *testing.T) {
	const status = `{
 "model_version_status": [
  {
   "version": "3",
   "state": "AVAILABLE",
   "status": {
    "error_code": "OK",
    "error_message": ""
   }
  }
 ]
}`
	const metadata = `{
"model_spec":{
 "name": "m",
 "signature_name": "",
 "version": "3"
}
,
"metadata": {"signature_def": {
 "signature_def": {
  "serving_default": {
   "inputs": {
    "x": {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "3", "name": ""}], "unknown_rank": false}, "name": "x:0"},
    "ids": {"dtype": "DT_INT64", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "2", "name": ""}], "unknown_rank": false}, "name": "ids:0"},
    "flag": {"dtype": "DT_BOOL", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "1", "name": ""}], "unknown_rank": false}, "name": "flag:0"},
    "text": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "2", "name": ""}], "unknown_rank": false}, "name": "text:0"}
   },
   "outputs": {
    "y": {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "3", "name": ""}], "unknown_rank": false}, "name": "y:0"},
    "label": {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}, {"size": "1", "name": ""}], "unknown_rank": false}, "name": "label:0"}
   },
   "method_name": "tensorflow/serving/predict",
   "defaults": {}
  }
 }
}
}
}
`
	for _, tc := range []struct {
		format, body, reply string
	}{
		{"row", `{"instances":[{"flag":[true],"ids":[1,-2],"text":["hello","wörld"],"x":[0.5,1,-2]}]}`,
			`{"predictions": [{"y": [1.0, 2.0, -4.0], "label": ["ok"]}]}`},
		{"columnar", `{"inputs":{"flag":[[true]],"ids":[[1,-2]],"text":[["hello","wörld"]],"x":[[0.5,1,-2]]}}`,
			`{"outputs": {"y": [[1.0, 2.0, -4.0]], "label": [["ok"]]}}`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			mux := http.NewServeMux()
			mux.HandleFunc("GET /v1/models/m/versions/3", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, status) })
			mux.HandleFunc("GET /v1/models/m/versions/3/metadata", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, metadata) })
			mux.HandleFunc("POST /v1/models/m/versions/3:predict", func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = append(got, r.Header.Get("Content-Type")+" "+string(b))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.reply)
			})
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			hs := &http.Server{Handler: mux}
			go hs.Serve(lis)
			defer hs.Close()
			srv := plan.Server{URL: lis.Addr().String(), Options: map[string]any{"rest_format": tc.format}}
			out := sendOne(t, tfPlan(srv, plan.ProtocolHTTP, "testdata/tfserving/rest_data.json"))
			if out.Err != nil || !out.Checked || out.Mismatch != "" {
				t.Fatalf("outcome %+v", out)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := "application/json " + tc.body; len(got) != 1 || got[0] != want {
				t.Errorf("sent %q\nwant %q", got, want)
			}
		})
	}
}
