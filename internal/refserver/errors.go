package refserver

import (
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
)

// code is Triton's server error class; it decides the HTTP status and the
// gRPC code of an answer so both protocols report a failure the same way.
type code int

const (
	codeInvalidArg code = iota
	codeNotFound
	codeInternal
	codeUnavailable
	codeUnsupported
	codeAlreadyExists
	codeCancelled
)

// apiError is a failure that reaches the client as {"error": msg} or a gRPC
// status.
type apiError struct {
	code code
	msg  string
	// scoped errors come from Triton's request normalization, whose
	// messages start with "[request id: <id>] " (see requestScoped).
	scoped bool
}

func (e *apiError) Error() string { return e.msg }

func errorf(c code, format string, args ...any) error {
	return &apiError{code: c, msg: fmt.Sprintf(format, args...)}
}

// scopedf is an error of request normalization: normalize prefixes it
// with the request's id as Triton does.
func scopedf(c code, format string, args ...any) error {
	return &apiError{code: c, msg: fmt.Sprintf(format, args...), scoped: true}
}

// requestScoped prefixes a scoped error with "[request id: <id>] ",
// "<id_unknown>" for a request without an id, as Triton's messages read.
func requestScoped(err error, id string) error {
	var ae *apiError
	if !errors.As(err, &ae) || !ae.scoped {
		return err
	}
	if id == "" {
		id = "<id_unknown>"
	}
	return &apiError{code: ae.code, msg: "[request id: " + id + "] " + ae.msg}
}

func classOf(err error) code {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.code
	}
	if errors.Is(err, errDropped) {
		return codeUnavailable
	}
	return codeInternal
}

// httpStatus follows Triton: INTERNAL 500, NOT_FOUND 404, UNAVAILABLE 503,
// UNSUPPORTED 501, everything else 400.
func httpStatus(err error) int {
	switch classOf(err) {
	case codeInternal:
		return http.StatusInternalServerError
	case codeNotFound:
		return http.StatusNotFound
	case codeUnavailable:
		return http.StatusServiceUnavailable
	case codeUnsupported:
		return http.StatusNotImplemented
	default:
		return http.StatusBadRequest
	}
}

func grpcCode(err error) codes.Code {
	switch classOf(err) {
	case codeInvalidArg:
		return codes.InvalidArgument
	case codeNotFound:
		return codes.NotFound
	case codeUnavailable:
		return codes.Unavailable
	case codeUnsupported:
		return codes.Unimplemented
	case codeAlreadyExists:
		return codes.AlreadyExists
	case codeCancelled:
		return codes.Canceled
	default:
		return codes.Internal
	}
}

// errDropped marks a request that fault injection decided to drop: HTTP
// closes the connection without an answer, gRPC answers UNAVAILABLE.
var errDropped = errors.New("request dropped by fault injection")
