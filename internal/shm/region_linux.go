//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is where Linux keeps POSIX shared memory objects.
const Dir = "/dev/shm"

// Region is a mapped shared-memory object: one this process created
// (Create) or a window of one another process made (Open).
type Region struct {
	key  string
	path string
	data []byte // the usable bytes
	mem  []byte // the whole mapping, which starts at a page boundary
}

// Create makes a new object (failing if the key exists, like
// shm_open(O_CREAT|O_EXCL)), sizes it and maps it read-write.
func Create(key string, size int) (*Region, error) {
	name, err := checkKey(key)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, fmt.Errorf("shm %q: size %d must be positive", key, size)
	}
	path := filepath.Join(Dir, name)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shm %q: creating %s: %w", key, path, err)
	}
	defer unix.Close(fd) // the mapping outlives the descriptor
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("shm %q: sizing to %d bytes: %w", key, size, err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("shm %q: mapping %d bytes: %w", key, size, err)
	}
	return &Region{key: "/" + name, path: path, data: data, mem: data}, nil
}

// Open maps byteSize bytes at offset of the existing object key
// read-write, as a server registering a client's region does. The object
// must be a regular file large enough for the window. mmap needs a
// page-aligned offset, so the mapping starts at the page below and Bytes
// skips the difference.
func Open(key string, offset, byteSize uint64) (*Region, error) {
	name, err := checkKey(key)
	if err != nil {
		return nil, err
	}
	if byteSize == 0 {
		return nil, fmt.Errorf("shm %q: byte_size must be positive", key)
	}
	path := filepath.Join(Dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("shm %q: %w", key, err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm %q: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("shm %q: %s is not a shared memory object", key, path)
	}
	// Mapping past the end of the object would fault on access.
	if offset > uint64(fi.Size()) || byteSize > uint64(fi.Size())-offset {
		return nil, fmt.Errorf("shm %q: offset %d + byte_size %d exceeds the object's %d bytes", key, offset, byteSize, fi.Size())
	}
	page := uint64(os.Getpagesize())
	base := offset / page * page
	skip := offset - base
	mem, err := unix.Mmap(int(f.Fd()), int64(base), int(skip+byteSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm %q: mapping %d bytes at %d: %w", key, byteSize, offset, err)
	}
	return &Region{key: "/" + name, path: path, data: mem[skip : skip+byteSize : skip+byteSize], mem: mem}, nil
}

// Key is the shm_open key to register with the server ("/name").
func (r *Region) Key() string { return r.key }

// Bytes is the mapped memory; it is invalid after Close.
func (r *Region) Bytes() []byte { return r.data }

// Size is the mapped length in bytes.
func (r *Region) Size() int { return len(r.data) }

// Close unmaps the region; the object stays until Unlink.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.data, r.mem = nil, nil
	if err != nil {
		return fmt.Errorf("shm %q: unmapping: %w", r.key, err)
	}
	return nil
}

// Unlink removes the object (shm_unlink); a server mapping keeps its pages.
func (r *Region) Unlink() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("shm %q: unlinking: %w", r.key, err)
	}
	return nil
}

// CleanupStale removes objects whose names start with prefix (normally
// Prefix) and whose owning process, as encoded by NewKey, no longer runs.
// It returns the removed names.
func CleanupStale(prefix string) ([]string, error) {
	if !strings.HasPrefix(prefix, Prefix) {
		return nil, fmt.Errorf("shm cleanup: prefix %q must start with %q so foreign objects are never touched", prefix, Prefix)
	}
	entries, err := os.ReadDir(Dir)
	if err != nil {
		return nil, fmt.Errorf("shm cleanup: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		pid, ok := ownerPID(name)
		if !ok || processAlive(pid) {
			continue
		}
		if err := os.Remove(filepath.Join(Dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
