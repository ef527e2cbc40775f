//go:build !linux

package refserver

import "errors"

func mapShm(key string, offset, byteSize uint64) ([]byte, func() error, error) {
	return nil, nil, errors.New("system shared memory is only supported on linux")
}
