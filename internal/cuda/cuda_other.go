//go:build !linux

package cuda

import "errors"

// Runtime is the CUDA runtime; perfscen reaches it on Linux only.
type Runtime struct{}

// Buffer is device memory.
type Buffer struct{}

// IPCHandleSize is sizeof(cudaIpcMemHandle_t).
const IPCHandleSize = 64

// Load always fails off Linux.
func Load() (*Runtime, error) { return nil, errors.New("CUDA shared memory needs Linux") }
