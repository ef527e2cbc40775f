package grpc

import (
	"testing"

	"go.uber.org/goleak"
)

// Every connection, server and sender goroutine the kind starts ends
// with its Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
