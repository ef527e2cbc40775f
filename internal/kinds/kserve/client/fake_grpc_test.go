package client

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2"
	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// fakeGRPC implements the simple model over gRPC.
type fakeGRPC struct {
	pb.UnimplementedGRPCInferenceServiceServer
	mu      sync.Mutex
	md      []metadata.MD
	regions map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus
	seen    compressionSeen
}

// compressionSeen records the grpc-encoding of every request header the
// server read, by method.
type compressionSeen struct {
	mu    sync.Mutex
	names map[string][]string
}

func (c *compressionSeen) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (c *compressionSeen) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (c *compressionSeen) HandleConn(context.Context, stats.ConnStats) {}
func (c *compressionSeen) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.names == nil {
			c.names = map[string][]string{}
		}
		c.names[h.FullMethod] = append(c.names[h.FullMethod], h.Compression)
	}
}

func (c *compressionSeen) of(method string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.names[method]...)
}

func newFakeGRPC(t testing.TB) (*fakeGRPC, string) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeGRPC{regions: map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus{}}
	s := grpc.NewServer(grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32), grpc.StatsHandler(&f.seen))
	pb.RegisterGRPCInferenceServiceServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	return f, lis.Addr().String()
}

func (f *fakeGRPC) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: true}, nil
}

func (f *fakeGRPC) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: false}, nil
}

func (f *fakeGRPC) ModelReady(_ context.Context, r *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	if r.GetName() != "simple" {
		return nil, status.Errorf(codes.InvalidArgument, "Request for unknown model: '%s' is not found", r.GetName())
	}
	return &pb.ModelReadyResponse{Ready: true}, nil
}

func (f *fakeGRPC) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	return &pb.ServerMetadataResponse{Name: "fake", Version: "0", Extensions: []string{"binary_tensor_data"}}, nil
}

func (f *fakeGRPC) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	if r.GetName() != "simple" {
		return nil, status.Errorf(codes.InvalidArgument, "Request for unknown model: '%s' is not found", r.GetName())
	}
	return &pb.ModelMetadataResponse{Name: "simple", Versions: []string{"1"}, Platform: "onnxruntime_onnx",
		Inputs: []*pb.ModelMetadataResponse_TensorMetadata{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{-1, 16}}}}, nil
}

func (f *fakeGRPC) ModelConfig(context.Context, *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	return &pb.ModelConfigResponse{Config: simpleConfig()}, nil
}

func (f *fakeGRPC) ModelStatistics(context.Context, *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	s := testStats
	d := func(x kservev2.StatDuration) *pb.StatisticDuration {
		return &pb.StatisticDuration{Count: x.Count, Ns: x.Ns}
	}
	return &pb.ModelStatisticsResponse{ModelStats: []*pb.ModelStatistics{{
		Name: s.Name, Version: s.Version, InferenceCount: s.InferenceCount, ExecutionCount: s.ExecutionCount,
		InferenceStats: &pb.InferStatistics{Success: d(s.InferenceStats.Success), Queue: d(s.InferenceStats.Queue)},
		BatchStats:     []*pb.InferBatchStatistics{{BatchSize: 2, ComputeInfer: d(s.BatchStats[0].ComputeInfer)}},
	}}}, nil
}

func (f *fakeGRPC) RepositoryIndex(context.Context, *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	return &pb.RepositoryIndexResponse{Models: []*pb.RepositoryIndexResponse_ModelIndex{{Name: "simple", Version: "1", State: "READY"}}}, nil
}

func (f *fakeGRPC) SystemSharedMemoryRegister(_ context.Context, r *pb.SystemSharedMemoryRegisterRequest) (*pb.SystemSharedMemoryRegisterResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.regions[r.GetName()] = &pb.SystemSharedMemoryStatusResponse_RegionStatus{Name: r.GetName(), Key: r.GetKey(), Offset: r.GetOffset(), ByteSize: r.GetByteSize()}
	return &pb.SystemSharedMemoryRegisterResponse{}, nil
}

func (f *fakeGRPC) SystemSharedMemoryStatus(_ context.Context, r *pb.SystemSharedMemoryStatusRequest) (*pb.SystemSharedMemoryStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &pb.SystemSharedMemoryStatusResponse{Regions: map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus{}}
	for n, s := range f.regions {
		if r.GetName() == "" || r.GetName() == n {
			out.Regions[n] = s
		}
	}
	return out, nil
}

func (f *fakeGRPC) SystemSharedMemoryUnregister(_ context.Context, r *pb.SystemSharedMemoryUnregisterRequest) (*pb.SystemSharedMemoryUnregisterResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.GetName() == "" {
		clear(f.regions)
	} else {
		delete(f.regions, r.GetName())
	}
	return &pb.SystemSharedMemoryUnregisterResponse{}, nil
}

func (f *fakeGRPC) infer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		f.mu.Lock()
		f.md = append(f.md, md)
		f.mu.Unlock()
	}
	if r.GetModelName() != "simple" {
		return nil, status.Errorf(codes.InvalidArgument, "Request for unknown model: '%s' is not found", r.GetModelName())
	}
	raws := map[string][]byte{}
	ri := 0
	for _, in := range r.GetInputs() {
		if _, shm := in.GetParameters()[kservev2.ParamShmRegion]; shm {
			reg, off, size, err := f.shmRef(in.GetParameters())
			if err != nil {
				return nil, err
			}
			if raws[in.GetName()], err = readShm(reg.GetKey(), reg.GetOffset(), off, size); err != nil {
				return nil, status.Error(codes.InvalidArgument, err.Error())
			}
			continue
		}
		if ri >= len(r.GetRawInputContents()) {
			return nil, status.Errorf(codes.InvalidArgument, "input %q has no raw contents", in.GetName())
		}
		raws[in.GetName()] = r.GetRawInputContents()[ri]
		ri++
	}
	sum, diff, err := addSub(raws["INPUT0"], raws["INPUT1"])
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	shape := r.GetInputs()[0].GetShape()
	names := []string{"OUTPUT0", "OUTPUT1"}
	shmOut := map[string]map[string]*pb.InferParameter{}
	if len(r.GetOutputs()) > 0 {
		names = names[:0]
		for _, o := range r.GetOutputs() {
			names = append(names, o.GetName())
			if _, ok := o.GetParameters()[kservev2.ParamShmRegion]; ok {
				shmOut[o.GetName()] = o.GetParameters()
			}
		}
	}
	resp := &pb.ModelInferResponse{ModelName: "simple", ModelVersion: "1", Id: r.GetId()}
	for _, n := range names {
		resp.Outputs = append(resp.Outputs, &pb.ModelInferResponse_InferOutputTensor{Name: n, Datatype: "INT32", Shape: shape})
		raw := sum
		if n == "OUTPUT1" {
			raw = diff
		}
		if params, ok := shmOut[n]; ok {
			reg, off, _, err := f.shmRef(params)
			if err != nil {
				return nil, err
			}
			if err := writeShm(reg.GetKey(), reg.GetOffset(), off, raw); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
			continue // Triton sends no raw entry for shm outputs
		}
		resp.RawOutputContents = append(resp.RawOutputContents, raw)
	}
	return resp, nil
}

func (f *fakeGRPC) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	return f.infer(ctx, r)
}

func (f *fakeGRPC) ModelStreamInfer(s grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp, err := f.infer(s.Context(), r)
		msg := &pb.ModelStreamInferResponse{InferResponse: resp}
		if err != nil {
			msg = &pb.ModelStreamInferResponse{ErrorMessage: status.Convert(err).Message(),
				InferResponse: &pb.ModelInferResponse{Id: r.GetId()}}
		}
		if err := s.Send(msg); err != nil {
			return err
		}
	}
}

func (f *fakeGRPC) shmRef(p map[string]*pb.InferParameter) (*pb.SystemSharedMemoryStatusResponse_RegionStatus, uint64, uint64, error) {
	name := p[kservev2.ParamShmRegion].GetStringParam()
	f.mu.Lock()
	reg, ok := f.regions[name]
	f.mu.Unlock()
	if !ok {
		return nil, 0, 0, status.Errorf(codes.InvalidArgument, "Unable to find system shared memory region: '%s'", name)
	}
	return reg, uint64(p[kservev2.ParamShmOffset].GetInt64Param()), uint64(p[kservev2.ParamShmByteSize].GetInt64Param()), nil
}
