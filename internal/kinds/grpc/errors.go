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
// counted: failing to reach the server (Unavailable, a deadline, a
// cancelled run) is a transport error, any other status is the server's
// answer. The engine tallies failures by message, so the message starts
// with the status code: the summary counts them per code.
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
		// side may give up first: the call timed out, as an HTTP call
		// would, whoever said so.
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("status %s: %w", st.Code(), context.DeadlineExceeded)}
	case codes.Canceled:
		if cerr := ctx.Err(); cerr != nil {
			return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("status %s: %w", st.Code(), cerr)}
		}
	}
	return &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: st.Code(), Message: st.Message()}
}
