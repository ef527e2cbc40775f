package client

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

// simpleConfig mirrors Triton's "simple" example model.
func simpleConfig() *pb.ModelConfig {
	tensor := func(n string) *pb.ModelInput {
		return &pb.ModelInput{Name: n, DataType: pb.DataType_TYPE_INT32, Dims: []int64{16}}
	}
	out := func(n string) *pb.ModelOutput {
		return &pb.ModelOutput{Name: n, DataType: pb.DataType_TYPE_INT32, Dims: []int64{16}}
	}
	return &pb.ModelConfig{
		Name: "simple", Platform: "onnxruntime_onnx", MaxBatchSize: 8,
		Input:         []*pb.ModelInput{tensor("INPUT0"), tensor("INPUT1")},
		Output:        []*pb.ModelOutput{out("OUTPUT0"), out("OUTPUT1")},
		InstanceGroup: []*pb.ModelInstanceGroup{{Count: 2, Kind: pb.ModelInstanceGroup_KIND_CPU}},
		SchedulingChoice: &pb.ModelConfig_DynamicBatching{DynamicBatching: &pb.ModelDynamicBatching{
			PreferredBatchSize: []int32{4}, MaxQueueDelayMicroseconds: 50,
		}},
	}
}

// addSub computes the simple model: OUTPUT0 = a+b, OUTPUT1 = a-b (INT32).
func addSub(a, b []byte) (sum, diff []byte, err error) {
	x, err := tensor.DecodeInt32s(a)
	if err != nil {
		return nil, nil, err
	}
	y, err := tensor.DecodeInt32s(b)
	if err != nil {
		return nil, nil, err
	}
	if len(x) != len(y) {
		return nil, nil, fmt.Errorf("input sizes differ: %d vs %d", len(x), len(y))
	}
	s, d := make([]int32, len(x)), make([]int32, len(x))
	for i := range x {
		s[i], d[i] = x[i]+y[i], x[i]-y[i]
	}
	return tensor.EncodeInt32s(s), tensor.EncodeInt32s(d), nil
}

var testStats = kservev2.ModelStats{
	Name: "simple", Version: "1", InferenceCount: 10, ExecutionCount: 4,
	InferenceStats: kservev2.InferStats{Success: kservev2.StatDuration{Count: 5, Ns: 5000}, Queue: kservev2.StatDuration{Count: 5, Ns: 100}},
	BatchStats:     []kservev2.BatchStats{{BatchSize: 2, ComputeInfer: kservev2.StatDuration{Count: 4, Ns: 800}}},
}

// fakeHTTP is a minimal KServe v2 HTTP server for the simple model.
type fakeHTTP struct {
	mu      sync.Mutex
	headers []http.Header // request headers seen on infer
	regions map[string]kservev2.SystemSharedMemoryStatus
}

func newFakeHTTP(t testing.TB) (*fakeHTTP, *httptest.Server) {
	f := &fakeHTTP{regions: map[string]kservev2.SystemSharedMemoryStatus{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/v2/health/live":
		w.WriteHeader(200)
	case p == "/v2/health/ready":
		w.WriteHeader(400) // "not ready", Triton style
	case p == "/v2":
		writeJSON(w, 200, kservev2.ServerMetadata{Name: "fake", Version: "0", Extensions: []string{"binary_tensor_data"}})
	case p == "/v2/models/simple/ready":
		w.WriteHeader(200)
	case p == "/v2/models/simple" || p == "/v2/models/simple/versions/1":
		writeJSON(w, 200, kservev2.ModelMetadata{Name: "simple", Versions: []string{"1"}, Platform: "onnxruntime_onnx",
			Inputs: []kservev2.TensorMetadata{{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{-1, 16}}}})
	case p == "/v2/models/simple/config":
		b, _ := kservev2.MarshalModelConfigJSON(simpleConfig())
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	case p == "/v2/models/simple/stats" || p == "/v2/models/stats":
		writeJSON(w, 200, kservev2.StatisticsResponse{ModelStats: []kservev2.ModelStats{testStats}})
	case p == "/v2/repository/index":
		writeJSON(w, 200, []kservev2.RepositoryModel{{Name: "simple", Version: "1", State: "READY"}})
	case strings.HasPrefix(p, "/v2/systemsharedmemory"):
		f.shm(w, r)
	case p == "/v2/models/simple/infer" || p == "/v2/models/simple/versions/1/infer":
		if r.Method != http.MethodPost {
			writeJSON(w, 405, kservev2.Error{Error: "Method Not Allowed"})
			return
		}
		f.infer(w, r)
	case strings.HasPrefix(p, "/v2/models/") && strings.HasSuffix(p, "/ready"):
		writeJSON(w, 400, kservev2.Error{Error: "Request for unknown model"})
	case strings.HasPrefix(p, "/v2/models/"):
		name := strings.Split(strings.TrimPrefix(p, "/v2/models/"), "/")[0]
		writeJSON(w, 400, kservev2.Error{Error: "Request for unknown model: '" + name + "' is not found"})
	default:
		writeJSON(w, 404, kservev2.Error{Error: "Not Found"})
	}
}

func (f *fakeHTTP) shm(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v2/systemsharedmemory"), "/")
	action := parts[len(parts)-1]
	name := ""
	if len(parts) == 4 && parts[1] == "region" {
		name = parts[2]
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch action {
	case "register":
		var body kservev2.SystemSharedMemoryRegister
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, 400, kservev2.Error{Error: err.Error()})
			return
		}
		f.regions[name] = kservev2.SystemSharedMemoryStatus{Name: name, Key: body.Key, Offset: body.Offset, ByteSize: body.ByteSize}
		w.WriteHeader(200)
	case "unregister":
		if name == "" {
			clear(f.regions)
		} else {
			delete(f.regions, name)
		}
		w.WriteHeader(200)
	case "status":
		out := []kservev2.SystemSharedMemoryStatus{}
		for n, s := range f.regions {
			if name == "" || n == name {
				out = append(out, s)
			}
		}
		writeJSON(w, 200, out)
	}
}

func (f *fakeHTTP) infer(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			writeJSON(w, 400, kservev2.Error{Error: err.Error()})
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		writeJSON(w, 400, kservev2.Error{Error: err.Error()})
		return
	}
	jsonPart, rest := data, []byte(nil)
	if v := r.Header.Get(kservev2.HeaderContentLength); v != "" {
		n, err := kservev2.ParseHeaderLength(v, len(data))
		if err == nil {
			jsonPart, rest, err = kservev2.SplitBinaryBody(data, n)
		}
		if err != nil {
			writeJSON(w, 400, kservev2.Error{Error: err.Error()})
			return
		}
	}
	var req kservev2.InferRequest
	if err := json.Unmarshal(jsonPart, &req); err != nil {
		writeJSON(w, 400, kservev2.Error{Error: err.Error()})
		return
	}
	bins, err := kservev2.SliceInputs(req.Inputs, rest)
	if err != nil {
		writeJSON(w, 400, kservev2.Error{Error: err.Error()})
		return
	}
	raws := map[string][]byte{}
	for i, in := range req.Inputs {
		switch {
		case bins[i] != nil:
			raws[in.Name] = bins[i]
		case in.Data != nil:
			t, err := tensor.FromJSONData(in.Name, in.DataType, in.Shape, in.Data)
			if err != nil {
				writeJSON(w, 400, kservev2.Error{Error: err.Error()})
				return
			}
			raws[in.Name] = t.Raw
		default:
			raw, err := f.shmInput(in.Parameters)
			if err != nil {
				writeJSON(w, 400, kservev2.Error{Error: err.Error()})
				return
			}
			raws[in.Name] = raw
		}
	}
	sum, diff, err := addSub(raws["INPUT0"], raws["INPUT1"])
	if err != nil {
		writeJSON(w, 400, kservev2.Error{Error: err.Error()})
		return
	}
	shape := req.Inputs[0].Shape
	allBinary, _, _ := req.Parameters.Bool(kservev2.ParamBinaryDataOutput)
	type want struct {
		name   string
		params kservev2.Parameters
	}
	wanted := []want{{"OUTPUT0", nil}, {"OUTPUT1", nil}}
	if len(req.Outputs) > 0 {
		wanted = wanted[:0]
		for _, o := range req.Outputs {
			wanted = append(wanted, want{o.Name, o.Parameters})
		}
	}
	resp := kservev2.InferResponse{ID: req.ID, ModelName: "simple", ModelVersion: "1"}
	var binaries [][]byte
	for _, o := range wanted {
		raw := sum
		if o.name == "OUTPUT1" {
			raw = diff
		}
		out := kservev2.InferOutput{Name: o.name, Shape: shape, DataType: tensor.INT32}
		binary, set, _ := o.params.Bool(kservev2.ParamBinaryData)
		if !set {
			binary = allBinary
		}
		if region, ok, _ := o.params.String(kservev2.ParamShmRegion); ok {
			if err := f.shmOutput(o.params, raw); err != nil {
				writeJSON(w, 400, kservev2.Error{Error: err.Error()})
				return
			}
			out.Parameters = kservev2.Parameters{kservev2.ParamShmRegion: region}
		} else if binary {
			out.Parameters = kservev2.Parameters{kservev2.ParamBinaryDataSize: len(raw)}
			binaries = append(binaries, raw)
		} else {
			out.Data, _ = tensor.MarshalJSONData(tensor.Tensor{Name: o.name, DataType: tensor.INT32, Shape: shape, Raw: raw})
		}
		resp.Outputs = append(resp.Outputs, out)
	}
	header, _ := json.Marshal(resp)
	payload := kservev2.EncodeBinaryBody(header, binaries...)
	if len(binaries) > 0 {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set(kservev2.HeaderContentLength, strconv.Itoa(len(header)))
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(payload)
		zw.Close()
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
	w.Write(payload)
}

func (f *fakeHTTP) shmRef(p kservev2.Parameters) (kservev2.SystemSharedMemoryStatus, uint64, uint64, error) {
	name, _, _ := p.String(kservev2.ParamShmRegion)
	off, _, _ := p.Int64(kservev2.ParamShmOffset)
	size, _, _ := p.Int64(kservev2.ParamShmByteSize)
	f.mu.Lock()
	reg, ok := f.regions[name]
	f.mu.Unlock()
	if !ok {
		return reg, 0, 0, fmt.Errorf("Unable to find system shared memory region: '%s'", name)
	}
	return reg, uint64(off), uint64(size), nil
}

func (f *fakeHTTP) shmInput(p kservev2.Parameters) ([]byte, error) {
	reg, off, size, err := f.shmRef(p)
	if err != nil {
		return nil, err
	}
	return readShm(reg.Key, reg.Offset, off, size)
}

func (f *fakeHTTP) shmOutput(p kservev2.Parameters, data []byte) error {
	reg, off, size, err := f.shmRef(p)
	if err != nil {
		return err
	}
	if uint64(len(data)) > size {
		return fmt.Errorf("output needs %d bytes, region slice has %d", len(data), size)
	}
	return writeShm(reg.Key, reg.Offset, off, data)
}

// serveLoopback accepts connections on a loopback port until the test
// ends and hands each to handle on a goroutine of its own; it returns the
// address.
func serveLoopback(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return lis.Addr().String()
}
