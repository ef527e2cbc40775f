package client

import (
	"context"
	"errors"
	"time"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
)

// Client speaks KServe v2 with Triton's extensions to one server. All methods
// are safe for concurrent use.
type Client interface {
	// ServerLive and ServerReady report the server's answer; an unreachable
	// server is an error, a server saying "no" is (false, nil).
	ServerLive(ctx context.Context) (bool, error)
	ServerReady(ctx context.Context) (bool, error)
	// ModelReady is (false, nil) when the server says the model is not ready
	// or unknown. version "" lets the server choose.
	ModelReady(ctx context.Context, name, version string) (bool, error)
	ServerMetadata(ctx context.Context) (*kservev2.ServerMetadata, error)
	ModelMetadata(ctx context.Context, name, version string) (*kservev2.ModelMetadata, error)
	ModelConfig(ctx context.Context, name, version string) (*ModelConfig, error)
	RepositoryIndex(ctx context.Context) ([]kservev2.RepositoryModel, error)
	LoadModel(ctx context.Context, name string) error
	UnloadModel(ctx context.Context, name string) error
	Infer(ctx context.Context, req *InferRequest) (*InferResponse, error)
	// ModelStatistics returns cumulative counters; name "" means all models,
	// version "" all versions.
	ModelStatistics(ctx context.Context, name, version string) ([]ModelStats, error)
	RegisterSystemSharedMemory(ctx context.Context, name, key string, offset, byteSize uint64) error
	// UnregisterSystemSharedMemory with name "" unregisters every region.
	UnregisterSystemSharedMemory(ctx context.Context, name string) error
	SystemSharedMemoryStatus(ctx context.Context, name string) ([]kservev2.SystemSharedMemoryStatus, error)
	// RegisterCUDASharedMemory registers a CUDA IPC handle (the region
	// is the caller's device memory; see internal/cuda).
	RegisterCUDASharedMemory(ctx context.Context, name string, rawHandle []byte, deviceID int64, byteSize uint64) error
	Close() error
}

// ConnClient is implemented by clients that can give one caller a
// connection of its own, on which the caller's goroutine does the whole
// exchange: no hand-off to transport goroutines per request.
type ConnClient interface {
	// NewConn returns nil when the client's options rule it out; the
	// caller then uses Infer.
	NewConn() Conn
}

// Conn is one caller's connection. It is not safe for concurrent use. It
// sends what Client.Infer sends and reports the same errors; timeout (0 =
// none) bounds each call besides ctx's deadline and the client's Timeout.
// A response's output tensors may lie in the connection's reply buffer,
// reused by the next call: they are valid until then (copy to keep them).
type Conn interface {
	Infer(ctx context.Context, req *InferRequest, timeout time.Duration) (*InferResponse, error)
	Close() error
}

// Streamer is implemented by clients with a bidirectional inference stream
// (gRPC ModelStreamInfer).
type Streamer interface {
	InferStream(ctx context.Context) (Stream, error)
}

// Stream carries requests and responses over one ModelStreamInfer call.
// Responses arrive in completion order; match them by ID. An error the server
// reports for one request comes back from Recv as a *ServerError alongside a
// response holding that request's ID (when the server sent one); the stream
// stays usable. Send and Recv may run in different goroutines, but each must
// not be called concurrently with itself.
type Stream interface {
	Send(req *InferRequest) error
	Recv() (*InferResponse, error)
	CloseSend() error
}

// ModelStats is one model version's cumulative statistics.
type ModelStats = kservev2.ModelStats

// ModelConfig is a digest of a model's configuration plus its raw forms.
type ModelConfig = kservev2.ModelConfig

// ShmRef places a tensor in a registered shared-memory region.
type ShmRef struct {
	Region   string
	Offset   uint64
	ByteSize uint64
}

// Input is a request input. When Shm is set the data already sits in the
// region and Tensor.Raw is ignored (and should be nil).
type Input struct {
	tensor.Tensor
	Shm *ShmRef
}

// RequestedOutput names an output to return; with Shm set the server writes
// it into the region instead of the response.
type RequestedOutput struct {
	Name string
	Shm  *ShmRef
}

// InferRequest is one inference call. Parameters carry request-level
// parameters such as sequence_id (int64 or string), sequence_start and
// sequence_end (bool), priority (uint64/int64) and timeout (int64 µs).
type InferRequest struct {
	Model      string
	Version    string
	ID         string
	Inputs     []Input
	Outputs    []RequestedOutput // empty: all outputs
	Parameters map[string]any
}

// InferResponse is a decoded reply. Outputs placed in shared memory have a
// nil Raw but carry their name, datatype and shape.
type InferResponse struct {
	Model      string
	Version    string
	ID         string
	Outputs    []tensor.Tensor
	Parameters map[string]any
	Timing     Timing
}

// Output returns the named output.
func (r *InferResponse) Output(name string) (tensor.Tensor, bool) {
	for _, t := range r.Outputs {
		if t.Name == name {
			return t, true
		}
	}
	return tensor.Tensor{}, false
}

// Timing splits a call's client-side wall time. SendRecv is time the client
// spent building, encoding and sending the request and receiving and
// decoding the reply; Wait is the rest: from the request's last byte
// leaving the client until the reply's first byte arrived (the status
// line over HTTP, the response HEADERS frame over the own gRPC
// connections). grpc-go tells neither moment, so on its connections Wait
// is the call's time less marshalling and unmarshalling, transfers
// included.
type Timing struct {
	SendRecv time.Duration
	Wait     time.Duration
}

// CUDAUnregisterer is implemented by the HTTP and gRPC clients.
type CUDAUnregisterer interface {
	// UnregisterCUDASharedMemory with name "" unregisters every region.
	UnregisterCUDASharedMemory(ctx context.Context, name string) error
}

// ErrCUDAUnsupported is kept for callers that still test for it; the
// clients no longer return it.
var ErrCUDAUnsupported = errors.New("CUDA shared memory is not supported in this build")
