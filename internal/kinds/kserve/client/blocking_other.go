//go:build !linux

package client

import "net"

// blockingTCP keeps nc in the poller: blocking sockets are a Linux path.
func blockingTCP(nc net.Conn) net.Conn { return nc }
