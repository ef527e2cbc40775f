//go:build linux

package tritoncapi

import (
	"errors"
	"fmt"
	"strings"
)

// The leak check is for tests (the external ones too): the counters it
// reads are kept by the code that takes and gives back Triton's objects.

// ErrLeaked says what Triton still held when a check ran.
var ErrLeaked = errors.New("in-process Triton objects still held")

// Leaks reports in-process servers, requests and output buffers not yet
// released; nil when everything was given back.
func Leaks() error {
	var parts []string
	if n := liveServers.Load(); n != 0 {
		parts = append(parts, fmt.Sprintf("%d servers", n))
	}
	if n := liveRequestCount(); n != 0 {
		parts = append(parts, fmt.Sprintf("%d requests", n))
	}
	if n := liveBufferCount(); n != 0 {
		parts = append(parts, fmt.Sprintf("%d output buffers", n))
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrLeaked, strings.Join(parts, ", "))
}
