//go:build linux

package refserver

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// shmDir is where glibc's shm_open keeps POSIX shared-memory objects.
const shmDir = "/dev/shm/"

// mapShm opens the POSIX shared-memory object key read-write and maps
// byteSize bytes at offset. mmap needs a page-aligned offset, so the map
// starts at the page below and the returned slice skips the difference.
func mapShm(key string, offset, byteSize uint64) ([]byte, func() error, error) {
	name := strings.TrimLeft(key, "/")
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return nil, nil, fmt.Errorf("invalid shared memory key %q", key)
	}
	if byteSize == 0 {
		return nil, nil, errors.New("byte_size must be positive")
	}
	f, err := os.OpenFile(shmDir+name, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a shared memory object", key)
	}
	// Mapping past the end of the object would fault on access.
	if offset > uint64(fi.Size()) || byteSize > uint64(fi.Size())-offset {
		return nil, nil, fmt.Errorf("offset %d + byte_size %d exceeds the object's %d bytes", offset, byteSize, fi.Size())
	}
	page := uint64(os.Getpagesize())
	base := offset / page * page
	skip := offset - base
	mem, err := unix.Mmap(int(f.Fd()), int64(base), int(skip+byteSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	return mem[skip : skip+byteSize : skip+byteSize], func() error { return unix.Munmap(mem) }, nil
}
