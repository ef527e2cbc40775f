package tfserving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/perfscen/perfscen/internal/kinds/tfserving/tfservingpb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// TF Serving's default ports (--port and --rest_api_port).
const (
	defaultGRPCPort = "8500"
	defaultRESTPort = "8501"
)

// api is one protocol's way to a TF Serving server: what Open asks before
// any load. Predict calls go through the point's prepared requests
// (predict.go).
type api interface {
	// status is GetModelStatus: the model's versions and their states.
	status(ctx context.Context, m modelRef) (*pb.GetModelStatusResponse, error)
	// signatures is GetModelMetadata's SignatureDefMap.
	signatures(ctx context.Context, m modelRef) (*pb.SignatureDefMap, error)
	// identify asks what else the server is when it does not answer as TF
	// Serving: a description of the API it does speak, or "".
	identify(ctx context.Context) string
	close() error
}

// connOptions are what both protocols' clients take from the plan.
type connOptions struct {
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	TLS     *tls.Config
	Headers map[string]string
	Timeout time.Duration
}

// splitURL reads host[:port] with an optional scheme; a missing port is
// TF Serving's default for the protocol.
func splitURL(proto plan.Protocol, raw string) (hostport string, tlsScheme bool, err error) {
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		rest, scheme = raw, ""
	}
	switch scheme {
	case "", "http", "grpc":
	case "https", "grpcs":
		tlsScheme = true
	default:
		return "", false, fmt.Errorf("URL %q: unsupported scheme %q", raw, scheme)
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.Contains(rest, "/") {
		return "", false, fmt.Errorf("URL %q must be host[:port] with an optional scheme and no path", raw)
	}
	if _, _, err := net.SplitHostPort(rest); err != nil {
		port := defaultRESTPort
		if proto == plan.ProtocolGRPC {
			port = defaultGRPCPort
		}
		rest = net.JoinHostPort(strings.Trim(rest, "[]"), port)
	}
	return rest, tlsScheme, nil
}

// withTimeout bounds ctx by d unless ctx already ends sooner.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// grpcError sorts a failed call as the engine counts it: UNAVAILABLE,
// deadlines and cancellations are transport failures (grpc-go reports an
// unreachable server as UNAVAILABLE), any other status the server's answer.
func grpcError(ctx context.Context, op string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	switch st.Code() {
	case codes.Unavailable:
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	case codes.DeadlineExceeded:
		return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("%w (%s)", context.DeadlineExceeded, st.Message())}
	case codes.Canceled:
		if cerr := ctx.Err(); cerr != nil {
			return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("%w (%s)", cerr, st.Message())}
		}
	}
	return &transport.ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: st.Code(), Message: st.Message()}
}

// invalidArgument reports whether the server refused the request as
// invalid: HTTP 400 or gRPC INVALID_ARGUMENT.
func invalidArgument(err error) bool {
	var se *transport.ServerError
	return errors.As(err, &se) && (se.HTTPStatus == 400 || se.GRPCCode == codes.InvalidArgument)
}

// tfNotFound is a 404 as TF Serving words it: over REST a JSON object with
// an "error" member, never another server's plain-text page (a 404 from
// another server's port says nothing of TF Serving's models).
func tfNotFound(proto plan.Protocol, err error) bool {
	if !notFound(err) {
		return false
	}
	if proto != plan.ProtocolHTTP {
		return true
	}
	var own *tfError
	return errors.As(err, &own)
}

// notFound reports whether the server said the model (or version) is not
// there: HTTP 404 or gRPC NOT_FOUND.
func notFound(err error) bool {
	var se *transport.ServerError
	return errors.As(err, &se) && (se.HTTPStatus == 404 || se.GRPCCode == codes.NotFound)
}

// unimplemented reports whether the server lacks the method or service
// asked for: gRPC UNIMPLEMENTED.
func unimplemented(err error) bool {
	var se *transport.ServerError
	return errors.As(err, &se) && se.GRPCCode == codes.Unimplemented
}

// tls12 is the client TLS default: the system roots, TLS 1.2 at least.
var tls12 = tls.Config{MinVersion: tls.VersionTLS12}
