package kservev2

import (
	"encoding/json"

	"github.com/perfscen/perfscen/internal/tensor"
)

// InferInput is one entry of an HTTP inference request's "inputs". Data holds
// the JSON tensor data verbatim (absent when the bytes travel in binary or
// shared memory).
type InferInput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	DataType   tensor.DataType `json:"datatype"`
	Parameters Parameters      `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// RequestedOutput is one entry of a request's "outputs".
type RequestedOutput struct {
	Name       string     `json:"name"`
	Parameters Parameters `json:"parameters,omitempty"`
}

// InferRequest is the JSON part of POST /v2/models/{m}[/versions/{v}]/infer.
type InferRequest struct {
	ID         string            `json:"id,omitempty"`
	Parameters Parameters        `json:"parameters,omitempty"`
	Inputs     []InferInput      `json:"inputs"`
	Outputs    []RequestedOutput `json:"outputs,omitempty"`
}

// InferOutput is one entry of a response's "outputs".
type InferOutput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	DataType   tensor.DataType `json:"datatype"`
	Parameters Parameters      `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// InferResponse is the JSON part of a successful inference reply.
type InferResponse struct {
	ID           string        `json:"id,omitempty"`
	ModelName    string        `json:"model_name"`
	ModelVersion string        `json:"model_version"`
	Parameters   Parameters    `json:"parameters,omitempty"`
	Outputs      []InferOutput `json:"outputs"`
}

// ServerMetadata is the body of GET /v2.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// TensorMetadata describes a model input or output; -1 marks a variable dim.
type TensorMetadata struct {
	Name     string          `json:"name"`
	DataType tensor.DataType `json:"datatype"`
	Shape    []int64         `json:"shape"`
}

// ModelMetadata is the body of GET /v2/models/{m}[/versions/{v}].
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions,omitempty"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// Error is the body of every error reply.
type Error struct {
	Error string `json:"error"`
}

// SystemSharedMemoryRegister is the body of
// POST /v2/systemsharedmemory/region/{name}/register.
type SystemSharedMemoryRegister struct {
	Key      string `json:"key"`
	Offset   uint64 `json:"offset"`
	ByteSize uint64 `json:"byte_size"`
}

// SystemSharedMemoryStatus is one entry of the system shm status list.
type SystemSharedMemoryStatus struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   uint64 `json:"offset"`
	ByteSize uint64 `json:"byte_size"`
}

// CUDAHandle carries a base64 cudaIpcMemHandle_t in HTTP register bodies.
type CUDAHandle struct {
	B64 string `json:"b64"`
}

// CUDASharedMemoryRegister is the body of
// POST /v2/cudasharedmemory/region/{name}/register.
type CUDASharedMemoryRegister struct {
	RawHandle CUDAHandle `json:"raw_handle"`
	DeviceID  int64      `json:"device_id"`
	ByteSize  uint64     `json:"byte_size"`
}

// CUDASharedMemoryStatus is one entry of the CUDA shm status list.
type CUDASharedMemoryStatus struct {
	Name     string `json:"name"`
	DeviceID uint64 `json:"device_id"`
	ByteSize uint64 `json:"byte_size"`
}

// RepositoryIndexRequest is the optional body of POST /v2/repository/index.
type RepositoryIndexRequest struct {
	Ready bool `json:"ready"`
}

// RepositoryModel is one entry of the repository index.
type RepositoryModel struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
}

// RepositoryControlRequest is the optional body of load and unload requests.
type RepositoryControlRequest struct {
	Parameters Parameters `json:"parameters,omitempty"`
}
