//go:build !linux

package shm

import "errors"

// Dir is empty where POSIX shared memory is not supported by this package.
const Dir = ""

var errUnsupported = errors.New("system shared memory is only supported on Linux")

// Region is a mapped shared-memory object; unavailable on this platform.
type Region struct{}

// Create always fails on this platform.
func Create(key string, size int) (*Region, error) { return nil, errUnsupported }

// Open always fails on this platform.
func Open(key string, offset, byteSize uint64) (*Region, error) { return nil, errUnsupported }

func (r *Region) Key() string   { return "" }
func (r *Region) Bytes() []byte { return nil }
func (r *Region) Size() int     { return 0 }
func (r *Region) Close() error  { return errUnsupported }
func (r *Region) Unlink() error { return errUnsupported }

// CleanupStale always fails on this platform.
func CleanupStale(prefix string) ([]string, error) { return nil, errUnsupported }
