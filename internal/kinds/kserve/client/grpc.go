package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/kservev2"
	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

type grpcClient struct {
	opts  Options
	conns []*grpc.ClientConn
	stubs []pb.GRPCInferenceServiceClient
	next  atomic.Uint64

	// What callers' own connections (NewConn) need to send what grpc-go
	// sends: the target as :authority, TLS, the metadata as header
	// fields, the encodings grpc-go would accept.
	own  transport.GRPCConnConfig
	mdOK bool
}

func newGRPCClient(_ context.Context, opts Options) (Client, error) {
	target, tlsScheme, err := splitURL(plan.ProtocolGRPC, opts.URL)
	if err != nil {
		return nil, err
	}
	if err := transport.GRPCCompressor(opts.GRPCCompression); err != nil {
		return nil, err
	}
	c := &grpcClient{opts: opts, mdOK: true}
	var cfg *tls.Config
	if opts.TLS != nil || tlsScheme {
		cfg = opts.TLS
		if cfg == nil {
			cfg = transport.DefaultTLS()
		}
	}
	c.own = transport.GRPCConnConfig{Target: target, TLS: cfg, Dial: opts.Dial, Timeout: opts.Timeout,
		AcceptEncoding: transport.GRPCAcceptEncoding(), Compression: opts.GRPCCompression, BusyPoll: opts.BusyPoll}
	dialOpts := transport.GRPCDialOptions{TLS: cfg, Dial: opts.Dial, Compression: opts.GRPCCompression}
	if len(opts.Headers) > 0 {
		md := make(map[string]string, len(opts.Headers))
		for k, v := range opts.Headers {
			md[strings.ToLower(k)] = v // gRPC metadata keys are lowercase
		}
		dialOpts.Metadata = md
		c.own.Metadata, c.mdOK = transport.GRPCMetadata(md)
	}
	n := max(opts.MaxConnections, 1)
	for range n {
		cc, err := transport.GRPCDial(target, dialOpts)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("grpc client: %w", err)
		}
		c.conns = append(c.conns, cc)
		c.stubs = append(c.stubs, pb.NewGRPCInferenceServiceClient(cc))
	}
	return c, nil
}

func (c *grpcClient) stub() pb.GRPCInferenceServiceClient {
	if len(c.stubs) == 1 {
		return c.stubs[0]
	}
	return c.stubs[c.next.Add(1)%uint64(len(c.stubs))]
}

func (c *grpcClient) Close() error {
	var errs []error
	for _, cc := range c.conns {
		if err := cc.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// grpcError sorts a failed call into server-sent errors and transport
// failures (transport.GRPCError).
func grpcError(ctx context.Context, op string, err error) error {
	return transport.GRPCError(ctx, op, err)
}

func (c *grpcClient) ServerLive(ctx context.Context) (bool, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ServerLive(ctx, &pb.ServerLiveRequest{})
	if err != nil {
		return false, grpcError(ctx, "server live", err)
	}
	return r.GetLive(), nil
}

func (c *grpcClient) ServerReady(ctx context.Context) (bool, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ServerReady(ctx, &pb.ServerReadyRequest{})
	if err != nil {
		return false, grpcError(ctx, "server ready", err)
	}
	return r.GetReady(), nil
}

func (c *grpcClient) ModelReady(ctx context.Context, name, version string) (bool, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ModelReady(ctx, &pb.ModelReadyRequest{Name: name, Version: version})
	if err != nil {
		e := grpcError(ctx, "model ready", err)
		var se *transport.ServerError
		// Unknown models answer INVALID_ARGUMENT / NOT_FOUND: "not ready".
		if errors.As(e, &se) && (se.GRPCCode == codes.InvalidArgument || se.GRPCCode == codes.NotFound) {
			return false, nil
		}
		return false, e
	}
	return r.GetReady(), nil
}

func (c *grpcClient) ServerMetadata(ctx context.Context) (*kservev2.ServerMetadata, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	if err != nil {
		return nil, grpcError(ctx, "server metadata", err)
	}
	return &kservev2.ServerMetadata{Name: r.GetName(), Version: r.GetVersion(), Extensions: r.GetExtensions()}, nil
}

func (c *grpcClient) ModelMetadata(ctx context.Context, name, version string) (*kservev2.ModelMetadata, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: name, Version: version})
	if err != nil {
		return nil, grpcError(ctx, "model metadata", err)
	}
	md := &kservev2.ModelMetadata{Name: r.GetName(), Versions: r.GetVersions(), Platform: r.GetPlatform()}
	for _, t := range r.GetInputs() {
		md.Inputs = append(md.Inputs, kservev2.TensorMetadata{Name: t.GetName(), DataType: tensor.DataType(t.GetDatatype()), Shape: t.GetShape()})
	}
	for _, t := range r.GetOutputs() {
		md.Outputs = append(md.Outputs, kservev2.TensorMetadata{Name: t.GetName(), DataType: tensor.DataType(t.GetDatatype()), Shape: t.GetShape()})
	}
	return md, nil
}

func (c *grpcClient) ModelConfig(ctx context.Context, name, version string) (*ModelConfig, error) {
	const op = "model config"
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ModelConfig(ctx, &pb.ModelConfigRequest{Name: name, Version: version})
	if err != nil {
		return nil, grpcError(ctx, op, err)
	}
	sum, err := kservev2.SummarizeModelConfig(r.GetConfig())
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	return sum, nil
}

func (c *grpcClient) RepositoryIndex(ctx context.Context) ([]kservev2.RepositoryModel, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil {
		return nil, grpcError(ctx, "repository index", err)
	}
	out := make([]kservev2.RepositoryModel, 0, len(r.GetModels()))
	for _, m := range r.GetModels() {
		out = append(out, kservev2.RepositoryModel{Name: m.GetName(), Version: m.GetVersion(), State: m.GetState(), Reason: m.GetReason()})
	}
	return out, nil
}

func (c *grpcClient) LoadModel(ctx context.Context, name string) error {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if _, err := c.stub().RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: name}); err != nil {
		return grpcError(ctx, "load model", err)
	}
	return nil
}

func (c *grpcClient) UnloadModel(ctx context.Context, name string) error {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if _, err := c.stub().RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: name}); err != nil {
		return grpcError(ctx, "unload model", err)
	}
	return nil
}

func (c *grpcClient) ModelStatistics(ctx context.Context, name, version string) ([]ModelStats, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: name, Version: version})
	if err != nil {
		return nil, grpcError(ctx, "model statistics", err)
	}
	out := make([]ModelStats, 0, len(r.GetModelStats()))
	for _, m := range r.GetModelStats() {
		out = append(out, StatsFromProto(m))
	}
	return out, nil
}

func (c *grpcClient) RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error {
	if name == "" {
		return fmt.Errorf("grpc register system shared memory: empty region name")
	}
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	_, err := c.stub().SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: name, Key: key, Offset: offset, ByteSize: byteSize})
	if err != nil {
		return grpcError(ctx, "register system shared memory", err)
	}
	return nil
}

func (c *grpcClient) UnregisterSystemSharedMemory(ctx context.Context, name string) error {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if _, err := c.stub().SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{Name: name}); err != nil {
		return grpcError(ctx, "unregister system shared memory", err)
	}
	return nil
}

func (c *grpcClient) SystemSharedMemoryStatus(ctx context.Context, name string) ([]kservev2.SystemSharedMemoryStatus, error) {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	r, err := c.stub().SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{Name: name})
	if err != nil {
		return nil, grpcError(ctx, "system shared memory status", err)
	}
	out := make([]kservev2.SystemSharedMemoryStatus, 0, len(r.GetRegions()))
	for _, s := range r.GetRegions() {
		out = append(out, kservev2.SystemSharedMemoryStatus{Name: s.GetName(), Key: s.GetKey(), Offset: s.GetOffset(), ByteSize: s.GetByteSize()})
	}
	sortRegions(out)
	return out, nil
}

func (c *grpcClient) RegisterCUDASharedMemory(ctx context.Context, name string, rawHandle []byte, deviceID int64, byteSize uint64) error {
	if name == "" {
		return fmt.Errorf("grpc register cuda shared memory: empty region name")
	}
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	_, err := c.stub().CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: name, RawHandle: rawHandle, DeviceId: deviceID, ByteSize: byteSize})
	if err != nil {
		return grpcError(ctx, "register cuda shared memory", err)
	}
	return nil
}

// UnregisterCUDASharedMemory unregisters a CUDA region ("" = all).
func (c *grpcClient) UnregisterCUDASharedMemory(ctx context.Context, name string) error {
	ctx, cancel := withTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if _, err := c.stub().CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{Name: name}); err != nil {
		return grpcError(ctx, "unregister cuda shared memory", err)
	}
	return nil
}
