//go:build linux

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// EnvLibrary names the CUDA runtime library to load instead of the
// default search.
const EnvLibrary = "PERFSCEN_CUDART"

// libraries are tried in order by the dynamic loader (LD_LIBRARY_PATH,
// ld.so.cache): the unversioned development link first, then the
// runtimes of CUDA 12 and 11.
var libraries = []string{"libcudart.so", "libcudart.so.12", "libcudart.so.11.0"}

// IPCHandleSize is sizeof(cudaIpcMemHandle_t).
const IPCHandleSize = 64

// cudaMemcpy kinds.
const (
	hostToDevice = 1
	deviceToHost = 2
)

// Runtime is the loaded CUDA runtime.
type Runtime struct {
	lib     string
	devices int
	fn      map[string]uintptr
	errStr  func(code int32) string
}

var (
	loadOnce sync.Once
	loaded   *Runtime
	loadErr  error
)

// Load finds the CUDA runtime and at least one GPU, once per process. The
// error says what is missing: the library (with the names tried) or a
// device (with the runtime's reason).
func Load() (*Runtime, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

func load() (*Runtime, error) {
	names := libraries
	if p := os.Getenv(EnvLibrary); p != "" {
		names = []string{p}
	}
	var h uintptr
	var lib string
	var errs []string
	for _, n := range names {
		var err error
		if h, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			lib = n
			break
		}
		errs = append(errs, err.Error())
	}
	if lib == "" {
		return nil, fmt.Errorf("the CUDA runtime library is not on this machine (tried %s; set %s to its path): %s",
			strings.Join(names, ", "), EnvLibrary, strings.Join(errs, "; "))
	}
	r := &Runtime{lib: lib, fn: map[string]uintptr{}}
	for _, s := range []string{"cudaGetDeviceCount", "cudaSetDevice", "cudaMalloc", "cudaFree", "cudaMemcpy", "cudaIpcGetMemHandle", "cudaGetErrorString"} {
		sym, err := purego.Dlsym(h, s)
		if err != nil {
			return nil, fmt.Errorf("%s is not the CUDA runtime: it lacks %s", lib, s)
		}
		r.fn[s] = sym
	}
	purego.RegisterFunc(&r.errStr, r.fn["cudaGetErrorString"])
	var n int32
	if err := r.check("cudaGetDeviceCount", r.call("cudaGetDeviceCount", uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, fmt.Errorf("no GPU usable through %s: %w", lib, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("no GPU: %s reports 0 CUDA devices", lib)
	}
	r.devices = int(n)
	return r, nil
}

// Library is the runtime library loaded; Devices how many GPUs it sees.
func (r *Runtime) Library() string { return filepath.Base(r.lib) }

// Devices is the number of CUDA devices.
func (r *Runtime) Devices() int { return r.devices }

//go:uintptrescapes
func (r *Runtime) call(name string, args ...uintptr) int32 {
	ret, _, _ := purego.SyscallN(r.fn[name], args...)
	return int32(ret)
}

func (r *Runtime) check(what string, code int32) error {
	if code == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (cudaError %d)", what, r.errStr(code), code)
}

// onDevice runs f on one OS thread with device current: the runtime's
// current device is per thread, and goroutines move between threads.
func (r *Runtime) onDevice(device int, f func() error) error {
	if device < 0 || device >= r.devices {
		return fmt.Errorf("CUDA device %d: this machine has %d", device, r.devices)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.check("cudaSetDevice", r.call("cudaSetDevice", uintptr(device))); err != nil {
		return err
	}
	return f()
}

// Buffer is device memory.
type Buffer struct {
	r      *Runtime
	device int
	ptr    uintptr
	size   int
}

// Malloc allocates size bytes on device.
func (r *Runtime) Malloc(device, size int) (*Buffer, error) {
	b := &Buffer{r: r, device: device, size: size}
	err := r.onDevice(device, func() error {
		return r.check("cudaMalloc", r.call("cudaMalloc", uintptr(unsafe.Pointer(&b.ptr)), uintptr(size)))
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Size is the buffer's size in bytes.
func (b *Buffer) Size() int { return b.size }

// Device is the buffer's device.
func (b *Buffer) Device() int { return b.device }

// Write copies src to the buffer at off.
func (b *Buffer) Write(off int, src []byte) error {
	if off < 0 || off+len(src) > b.size {
		return fmt.Errorf("CUDA write of %d bytes at %d: buffer holds %d", len(src), off, b.size)
	}
	if len(src) == 0 {
		return nil
	}
	return b.r.onDevice(b.device, func() error {
		return b.r.check("cudaMemcpy", b.r.call("cudaMemcpy", b.ptr+uintptr(off), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), hostToDevice))
	})
}

// Read copies the buffer's first len(dst) bytes into dst.
func (b *Buffer) Read(dst []byte) error {
	if len(dst) > b.size {
		return fmt.Errorf("CUDA read of %d bytes: buffer holds %d", len(dst), b.size)
	}
	if len(dst) == 0 {
		return nil
	}
	return b.r.onDevice(b.device, func() error {
		return b.r.check("cudaMemcpy", b.r.call("cudaMemcpy", uintptr(unsafe.Pointer(&dst[0])), b.ptr, uintptr(len(dst)), deviceToHost))
	})
}

// IPCHandle is the cudaIpcMemHandle_t a server opens the buffer with.
func (b *Buffer) IPCHandle() ([]byte, error) {
	var h [IPCHandleSize]byte
	err := b.r.onDevice(b.device, func() error {
		return b.r.check("cudaIpcGetMemHandle", b.r.call("cudaIpcGetMemHandle", uintptr(unsafe.Pointer(&h[0])), b.ptr))
	})
	if err != nil {
		return nil, err
	}
	return h[:], nil
}

// Free releases the buffer; later calls do nothing.
func (b *Buffer) Free() error {
	if b == nil || b.ptr == 0 {
		return nil
	}
	err := b.r.onDevice(b.device, func() error { return b.r.check("cudaFree", b.r.call("cudaFree", b.ptr)) })
	b.ptr = 0
	return err
}
