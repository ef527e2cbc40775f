package grpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// callError classifies a failed call the way every kind's errors are
// counted: failing to reach the server (Unavailable, a cancelled run) is a
// transport error, any other status is the call's answer. A deadline
// exceeded is such an answer: the server was reached and the call took
// longer than server.grpc.deadline, so it is a failed request of that
// status, counted as such, never a sign the server is gone (as a
// transport error, a deadline shorter than the server's time made every
// worker back off to 250 ms and the run end "server unreachable"). A
// server that answers nothing in time fails every request, which the
// error budget reports as no request succeeding (exit 3). The engine
// tallies failures by message, so the message starts with the status
// code: the summary counts them per code.
func callError(ctx context.Context, op string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	switch st.Code() {
	case codes.Unavailable:
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("status %s: %s", st.Code(), st.Message())}
	case codes.DeadlineExceeded:
		// The deadline travels with the call (grpc-timeout), and either
		// side may give up first: the call's status, whoever said so.
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("status %s: %w", st.Code(), ctx.Err())}
		}
		return &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: st.Code(), Message: "deadline exceeded: " + st.Message()}
	case codes.Canceled:
		if cerr := ctx.Err(); cerr != nil {
			return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("status %s: %w", st.Code(), cerr)}
		}
	case codes.Unknown:
		// A Go server whose handler returns its context's error, as
		// etcd's Watch does when the call's deadline (the grpc-timeout
		// sent) fires on its side first, answers Unknown with Go's text:
		// the same deadline, told by the server.
		if st.Message() == context.DeadlineExceeded.Error() {
			return &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: codes.DeadlineExceeded,
				Message: "deadline exceeded: the server's own deadline (it answered Unknown: " + st.Message() + ")"}
		}
	}
	return &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: st.Code(), Message: st.Message()}
}
