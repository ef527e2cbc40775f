//go:build !linux

package transport

import (
	"net"
	"time"
)

// blockingTCP keeps nc in the poller: blocking sockets are a Linux path.
func blockingTCP(nc net.Conn, _ time.Duration) net.Conn { return nc }

// ForceBlocking does nothing off Linux.
func ForceBlocking() (restore func()) { return func() {} }

// BlockingCounts is zero off Linux.
func BlockingCounts() (opened int64, open int32) { return 0, 0 }
