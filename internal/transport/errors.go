package transport

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/runner/plan"
)

// ErrUnavailable matches (errors.Is) every transport failure: connection
// refused or reset, DNS, TLS, timeouts. Errors the server itself returned are
// *ServerError instead.
var ErrUnavailable = errors.New("server unreachable")

// ServerError is an error answer from the server: a non-200 HTTP status or a
// gRPC status the server sent.
type ServerError struct {
	Protocol   plan.Protocol
	Op         string // e.g. "infer", "model metadata"
	HTTPStatus int    // HTTP only
	GRPCCode   codes.Code
	Message    string
}

func (e *ServerError) Error() string {
	if e.Protocol == plan.ProtocolHTTP {
		return fmt.Sprintf("%s %s: server returned %d: %s", e.Protocol, e.Op, e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("%s %s: server returned %s: %s", e.Protocol, e.Op, e.GRPCCode, e.Message)
}

// TransportError wraps a failure to reach the server or to complete the
// exchange. errors.Is(err, ErrUnavailable) holds for it, and the cause
// (including context.DeadlineExceeded / context.Canceled) stays reachable.
type TransportError struct {
	Protocol plan.Protocol
	Op       string
	Err      error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Protocol, e.Op, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Is makes every TransportError match ErrUnavailable.
func (e *TransportError) Is(target error) bool { return target == ErrUnavailable }

// ProtocolError reports a reply the client could not make sense of (bad JSON,
// truncated binary data, inconsistent tensors).
type ProtocolError struct {
	Protocol plan.Protocol
	Op       string
	Err      error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s %s: malformed reply: %v", e.Protocol, e.Op, e.Err)
}

func (e *ProtocolError) Unwrap() error { return e.Err }
