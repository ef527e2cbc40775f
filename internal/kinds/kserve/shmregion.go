package kserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfscen/perfscen/internal/cuda"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/shm"
)

// memRegion is one shared-memory region of a point: POSIX system memory
// the server maps, or CUDA device memory it opens through an IPC handle.
type memRegion interface {
	// Bytes is the region's content on the host: the mapping itself
	// (system), or a host copy that sync refreshes (CUDA).
	Bytes() []byte
	write(off int, b []byte) error
	// sync makes Bytes current after the server wrote the region.
	sync() error
	register(ctx context.Context, c client.Client, name string) error
	unregister(ctx context.Context, c client.Client, name string) error
	free() error
}

// sysRegion is POSIX shared memory (/dev/shm).
type sysRegion struct{ r *shm.Region }

func newSysRegion(name string, size int) (memRegion, error) {
	r, err := shm.Create("/"+name, size)
	if err != nil {
		return nil, fmt.Errorf("creating shared memory: %w", err)
	}
	return sysRegion{r}, nil
}

func (s sysRegion) Bytes() []byte { return s.r.Bytes() }

func (s sysRegion) write(off int, b []byte) error {
	copy(s.r.Bytes()[off:], b)
	return nil
}

func (s sysRegion) sync() error { return nil }

func (s sysRegion) register(ctx context.Context, c client.Client, name string) error {
	return c.RegisterSystemSharedMemory(ctx, name, s.r.Key(), 0, uint64(len(s.r.Bytes())))
}

func (s sysRegion) unregister(ctx context.Context, c client.Client, name string) error {
	return c.UnregisterSystemSharedMemory(ctx, name)
}

func (s sysRegion) free() error { return errors.Join(s.r.Close(), s.r.Unlink()) }

// cudaRegion is device memory of the local GPU, handed to the server as a
// CUDA IPC handle (Triton's cuda_shared_memory extension).
type cudaRegion struct {
	buf  *cuda.Buffer
	host []byte // what sync last read back
}

func newCUDARegion(rt *cuda.Runtime, device, size int) (memRegion, error) {
	b, err := rt.Malloc(device, size)
	if err != nil {
		return nil, fmt.Errorf("creating CUDA shared memory: %w", err)
	}
	return &cudaRegion{buf: b, host: make([]byte, size)}, nil
}

func (r *cudaRegion) Bytes() []byte { return r.host }

func (r *cudaRegion) write(off int, b []byte) error { return r.buf.Write(off, b) }

func (r *cudaRegion) sync() error { return r.buf.Read(r.host) }

func (r *cudaRegion) register(ctx context.Context, c client.Client, name string) error {
	h, err := r.buf.IPCHandle()
	if err != nil {
		return err
	}
	return c.RegisterCUDASharedMemory(ctx, name, h, int64(r.buf.Device()), uint64(r.buf.Size()))
}

func (r *cudaRegion) unregister(ctx context.Context, c client.Client, name string) error {
	u, ok := c.(client.CUDAUnregisterer)
	if !ok {
		return fmt.Errorf("the %T client cannot unregister CUDA shared memory", c)
	}
	return u.UnregisterCUDASharedMemory(ctx, name)
}

func (r *cudaRegion) free() error { return r.buf.Free() }

// cudaDevice is the GPU CUDA shared memory is allocated on.
const cudaDevice = 0

// cudaRuntime loads the CUDA runtime for a point asking for CUDA shared
// memory; a machine without it (or without a GPU) is the scenario's
// mistake here, before any load, saying what is missing.
func cudaRuntime() (*cuda.Runtime, error) {
	rt, err := cuda.Load()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCUDA, err)
	}
	return rt, nil
}
