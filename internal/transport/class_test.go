package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClass(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Err: syscall.ECONNREFUSED}}
	for want, err := range map[string]error{
		"":                     nil,
		"HTTP 500":             &ServerError{Protocol: "http", Op: "infer", HTTPStatus: 500},
		"gRPC InvalidArgument": &ServerError{Protocol: "grpc", Op: "infer", GRPCCode: codes.InvalidArgument},
		"malformed reply":      &ProtocolError{Protocol: "http", Op: "infer", Err: errors.New("bad json")},
		"connection refused":   &TransportError{Protocol: "http", Op: "infer", Err: fmt.Errorf("post x: %w", refused)},
		"connection reset":     &TransportError{Protocol: "http", Op: "infer", Err: io.EOF},
		"timeout":              &TransportError{Protocol: "http", Op: "infer", Err: fmt.Errorf("%w (no reply within 1s)", context.DeadlineExceeded)},
		"cancelled":            &TransportError{Protocol: "http", Op: "infer", Err: context.Canceled},
		"DNS":                  &TransportError{Protocol: "http", Op: "infer", Err: &net.DNSError{Name: "x", Err: "no such host"}},
		"other":                errors.New("encoding the request"),
	} {
		if got := Class(err); got != want {
			t.Errorf("Class(%v) = %q, want %q", err, got, want)
		}
	}
	// grpc-go reports a refused dial as UNAVAILABLE status text.
	st := status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`)
	if got := Class(GRPCError(context.Background(), "infer", st)); got != "connection refused" {
		t.Errorf("grpc-go's refused dial: %q", got)
	}
}
