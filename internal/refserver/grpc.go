package refserver

import (
	"context"

	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// grpcService implements Triton's GRPCInferenceService over the server.
type grpcService struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	s *Server
}

func grpcErr(err error) error {
	if err == nil {
		return nil
	}
	return status.Error(grpcCode(err), err.Error())
}

func (g *grpcService) ServerLive(context.Context, *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	return &inferencepb.ServerLiveResponse{Live: true}, nil
}

func (g *grpcService) ServerReady(context.Context, *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	return &inferencepb.ServerReadyResponse{Ready: true}, nil
}

func (g *grpcService) ModelReady(_ context.Context, r *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	_, err := g.s.resolve(r.GetName(), r.GetVersion())
	return &inferencepb.ModelReadyResponse{Ready: err == nil}, nil
}

func (g *grpcService) ServerMetadata(context.Context, *inferencepb.ServerMetadataRequest) (*inferencepb.ServerMetadataResponse, error) {
	return &inferencepb.ServerMetadataResponse{Name: ServerName, Version: g.s.version, Extensions: serverExtensions}, nil
}

func (g *grpcService) ModelMetadata(_ context.Context, r *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	m, err := g.s.resolve(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, grpcErr(err)
	}
	md := m.metadata()
	conv := func(ts []kservev2.TensorMetadata) []*inferencepb.ModelMetadataResponse_TensorMetadata {
		out := make([]*inferencepb.ModelMetadataResponse_TensorMetadata, len(ts))
		for i, t := range ts {
			out[i] = &inferencepb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape}
		}
		return out
	}
	return &inferencepb.ModelMetadataResponse{Name: md.Name, Versions: md.Versions, Platform: md.Platform,
		Inputs: conv(md.Inputs), Outputs: conv(md.Outputs)}, nil
}

func (g *grpcService) ModelConfig(_ context.Context, r *inferencepb.ModelConfigRequest) (*inferencepb.ModelConfigResponse, error) {
	m, err := g.s.resolve(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, grpcErr(err)
	}
	return &inferencepb.ModelConfigResponse{Config: m.modelConfig()}, nil
}

func (g *grpcService) ModelStatistics(_ context.Context, r *inferencepb.ModelStatisticsRequest) (*inferencepb.ModelStatisticsResponse, error) {
	if r.GetName() == "" && r.GetVersion() != "" {
		return nil, grpcErr(errorf(codeInvalidArg, "model version requires a model name"))
	}
	stats, err := g.s.modelStats(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, grpcErr(err)
	}
	out := &inferencepb.ModelStatisticsResponse{}
	for _, s := range stats {
		out.ModelStats = append(out.ModelStats, statsToProto(s))
	}
	return out, nil
}

func statsToProto(s kservev2.ModelStats) *inferencepb.ModelStatistics {
	d := func(x kservev2.StatDuration) *inferencepb.StatisticDuration {
		return &inferencepb.StatisticDuration{Count: x.Count, Ns: x.Ns}
	}
	is := s.InferenceStats
	ps := &inferencepb.ModelStatistics{
		Name: s.Name, Version: s.Version, LastInference: s.LastInference,
		InferenceCount: s.InferenceCount, ExecutionCount: s.ExecutionCount,
		InferenceStats: &inferencepb.InferStatistics{
			Success: d(is.Success), Fail: d(is.Fail), Queue: d(is.Queue),
			ComputeInput: d(is.ComputeInput), ComputeInfer: d(is.ComputeInfer), ComputeOutput: d(is.ComputeOutput),
			CacheHit: d(is.CacheHit), CacheMiss: d(is.CacheMiss),
		},
		ResponseStats: map[string]*inferencepb.InferResponseStatistics{},
	}
	for _, b := range s.BatchStats {
		ps.BatchStats = append(ps.BatchStats, &inferencepb.InferBatchStatistics{
			BatchSize: b.BatchSize, ComputeInput: d(b.ComputeInput), ComputeInfer: d(b.ComputeInfer), ComputeOutput: d(b.ComputeOutput),
		})
	}
	return ps
}

func (g *grpcService) RepositoryIndex(_ context.Context, r *inferencepb.RepositoryIndexRequest) (*inferencepb.RepositoryIndexResponse, error) {
	if r.GetRepositoryName() != "" {
		return nil, grpcErr(errorf(codeUnsupported, "'repository_name' specification is not supported"))
	}
	out := &inferencepb.RepositoryIndexResponse{}
	for _, e := range g.s.repo.index(r.GetReady()) {
		out.Models = append(out.Models, &inferencepb.RepositoryIndexResponse_ModelIndex{Name: e.name, Version: e.version, State: e.state, Reason: e.reason})
	}
	return out, nil
}

func repoParams(ps map[string]*inferencepb.ModelRepositoryParameter) kservev2.Parameters {
	out := kservev2.Parameters{}
	for k, v := range ps {
		switch x := v.GetParameterChoice().(type) {
		case *inferencepb.ModelRepositoryParameter_StringParam:
			out[k] = x.StringParam
		case *inferencepb.ModelRepositoryParameter_BoolParam:
			out[k] = x.BoolParam
		case *inferencepb.ModelRepositoryParameter_Int64Param:
			out[k] = x.Int64Param
		default:
			out[k] = string(v.GetBytesParam())
		}
	}
	return out
}

func (g *grpcService) RepositoryModelLoad(_ context.Context, r *inferencepb.RepositoryModelLoadRequest) (*inferencepb.RepositoryModelLoadResponse, error) {
	if r.GetRepositoryName() != "" {
		return nil, grpcErr(errorf(codeUnsupported, "'repository_name' specification is not supported"))
	}
	if err := g.s.repositoryControl(r.GetModelName(), true, repoParams(r.GetParameters())); err != nil {
		return nil, grpcErr(err)
	}
	return &inferencepb.RepositoryModelLoadResponse{}, nil
}

func (g *grpcService) RepositoryModelUnload(_ context.Context, r *inferencepb.RepositoryModelUnloadRequest) (*inferencepb.RepositoryModelUnloadResponse, error) {
	if r.GetRepositoryName() != "" {
		return nil, grpcErr(errorf(codeUnsupported, "'repository_name' specification is not supported"))
	}
	if err := g.s.repositoryControl(r.GetModelName(), false, repoParams(r.GetParameters())); err != nil {
		return nil, grpcErr(err)
	}
	return &inferencepb.RepositoryModelUnloadResponse{}, nil
}

func (g *grpcService) SystemSharedMemoryStatus(_ context.Context, r *inferencepb.SystemSharedMemoryStatusRequest) (*inferencepb.SystemSharedMemoryStatusResponse, error) {
	regs, err := g.s.shm.status(r.GetName())
	if err != nil {
		return nil, grpcErr(err)
	}
	out := &inferencepb.SystemSharedMemoryStatusResponse{Regions: map[string]*inferencepb.SystemSharedMemoryStatusResponse_RegionStatus{}}
	for _, reg := range regs {
		out.Regions[reg.name] = &inferencepb.SystemSharedMemoryStatusResponse_RegionStatus{Name: reg.name, Key: reg.key, Offset: reg.offset, ByteSize: reg.byteSize}
	}
	return out, nil
}

func (g *grpcService) SystemSharedMemoryRegister(_ context.Context, r *inferencepb.SystemSharedMemoryRegisterRequest) (*inferencepb.SystemSharedMemoryRegisterResponse, error) {
	if err := g.s.shm.register(r.GetName(), r.GetKey(), r.GetOffset(), r.GetByteSize()); err != nil {
		return nil, grpcErr(err)
	}
	return &inferencepb.SystemSharedMemoryRegisterResponse{}, nil
}

func (g *grpcService) SystemSharedMemoryUnregister(_ context.Context, r *inferencepb.SystemSharedMemoryUnregisterRequest) (*inferencepb.SystemSharedMemoryUnregisterResponse, error) {
	if err := g.s.shm.unregister(r.GetName()); err != nil {
		return nil, grpcErr(err)
	}
	return &inferencepb.SystemSharedMemoryUnregisterResponse{}, nil
}

func (g *grpcService) CudaSharedMemoryStatus(_ context.Context, r *inferencepb.CudaSharedMemoryStatusRequest) (*inferencepb.CudaSharedMemoryStatusResponse, error) {
	if r.GetName() != "" {
		return nil, grpcErr(errCUDANotFound(r.GetName()))
	}
	return &inferencepb.CudaSharedMemoryStatusResponse{Regions: map[string]*inferencepb.CudaSharedMemoryStatusResponse_RegionStatus{}}, nil
}

func (g *grpcService) CudaSharedMemoryRegister(_ context.Context, r *inferencepb.CudaSharedMemoryRegisterRequest) (*inferencepb.CudaSharedMemoryRegisterResponse, error) {
	return nil, grpcErr(errCUDARegister(r.GetName()))
}

func (g *grpcService) CudaSharedMemoryUnregister(context.Context, *inferencepb.CudaSharedMemoryUnregisterRequest) (*inferencepb.CudaSharedMemoryUnregisterResponse, error) {
	return &inferencepb.CudaSharedMemoryUnregisterResponse{}, nil
}
