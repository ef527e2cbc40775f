package refserver

import (
	"runtime/debug"
	"sort"
	"sync"

	"github.com/perfscen/perfscen/internal/shm"
)

// shmRegion is a registered system shared-memory region: a mapping of
// byteSize bytes of the object key starting at offset.
type shmRegion struct {
	name, key        string
	offset, byteSize uint64

	mu     sync.RWMutex // readers copy in/out; unregister takes it to unmap
	mem    []byte       // the usable bytes (len == byteSize)
	unmap  func() error
	closed bool
}

// shmRef names bytes inside a region, as a tensor's shared_memory_*
// parameters do.
type shmRef struct {
	region       string
	offset, size int64
}

// shmRegistry is the server's table of system shared-memory regions.
type shmRegistry struct {
	mu      sync.RWMutex
	regions map[string]*shmRegion
}

func newShmRegistry() *shmRegistry { return &shmRegistry{regions: map[string]*shmRegion{}} }

func (r *shmRegistry) register(name, key string, offset, byteSize uint64) error {
	if name == "" {
		return errorf(codeInvalidArg, "shared memory region name must not be empty")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.regions[name]; ok {
		return errorf(codeAlreadyExists, "shared memory region '%s' already in manager", name)
	}
	reg, err := shm.Open(key, offset, byteSize)
	if err != nil {
		return errorf(codeInvalidArg, "unable to register shared memory region '%s': %v", name, err)
	}
	r.regions[name] = &shmRegion{name: name, key: key, offset: offset, byteSize: byteSize, mem: reg.Bytes(), unmap: reg.Close}
	return nil
}

// unregister removes one region, or all when name is empty. Unknown names
// are not an error, as in Triton.
func (r *shmRegistry) unregister(name string) error {
	r.mu.Lock()
	var victims []*shmRegion
	if name == "" {
		for _, reg := range r.regions {
			victims = append(victims, reg)
		}
		clear(r.regions)
	} else if reg, ok := r.regions[name]; ok {
		victims = append(victims, reg)
		delete(r.regions, name)
	}
	r.mu.Unlock()
	var first error
	for _, reg := range victims {
		// Waits for any copy in progress; later users see closed.
		reg.mu.Lock()
		reg.closed = true
		err := reg.unmap()
		reg.mem = nil
		reg.mu.Unlock()
		if err != nil && first == nil {
			first = errorf(codeInternal, "unmapping shared memory region '%s': %v", reg.name, err)
		}
	}
	return first
}

// status lists one region (NOT_FOUND if unknown) or all, sorted by name.
func (r *shmRegistry) status(name string) ([]*shmRegion, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if name != "" {
		reg, ok := r.regions[name]
		if !ok {
			return nil, errorf(codeNotFound, "Unable to find system shared memory region: '%s'", name)
		}
		return []*shmRegion{reg}, nil
	}
	out := make([]*shmRegion, 0, len(r.regions))
	for _, reg := range r.regions {
		out = append(out, reg)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// access runs fn on the bytes ref names, holding the region so it cannot be
// unmapped meanwhile. Bounds are checked against the registered size; a
// fault in the mapping (the object was truncated behind our back) becomes
// an error instead of a crash.
func (r *shmRegistry) access(ref shmRef, fn func([]byte)) (err error) {
	r.mu.RLock()
	reg, ok := r.regions[ref.region]
	r.mu.RUnlock()
	if !ok {
		return errorf(codeInvalidArg, "Unable to find shared memory region: '%s'", ref.region)
	}
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	if reg.closed {
		return errorf(codeInvalidArg, "Unable to find shared memory region: '%s'", ref.region)
	}
	if ref.offset < 0 || ref.size < 0 || uint64(ref.offset) > reg.byteSize || uint64(ref.size) > reg.byteSize-uint64(ref.offset) {
		return errorf(codeInvalidArg, "shared memory region '%s': offset %d + byte size %d is outside its %d bytes", ref.region, ref.offset, ref.size, reg.byteSize)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = errorf(codeInternal, "shared memory region '%s': fault while accessing it: %v", ref.region, p)
		}
	}()
	fn(reg.mem[ref.offset : ref.offset+ref.size : ref.offset+ref.size])
	return nil
}

// read copies the referenced bytes out.
func (r *shmRegistry) read(ref shmRef) ([]byte, error) {
	var out []byte
	err := r.access(ref, func(b []byte) { out = append([]byte(nil), b...) })
	return out, err
}

// write copies data into the referenced bytes; data must fit.
func (r *shmRegistry) write(ref shmRef, data []byte) error {
	if int64(len(data)) > ref.size {
		return errorf(codeInvalidArg, "shared memory region '%s': output of %d bytes does not fit in the %d bytes given", ref.region, len(data), ref.size)
	}
	return r.access(ref, func(b []byte) { copy(b, data) })
}

func (r *shmRegistry) closeAll() error { return r.unregister("") }
