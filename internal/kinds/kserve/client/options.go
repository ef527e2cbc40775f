package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/perfscen/perfscen/runner/plan"
)

// Options configure a client. Only Protocol and URL are required.
type Options struct {
	// Protocol picks the client; a name from outside the program goes
	// through plan.ParseProtocol first.
	Protocol plan.Protocol
	// URL is host:port or a URL with scheme http, https, grpc or grpcs.
	URL string
	// Timeout bounds each call whose context has no earlier deadline; 0 = none.
	Timeout time.Duration
	// Headers go on every HTTP request / as gRPC metadata. Values never
	// appear in errors.
	Headers map[string]string
	TLS     *tls.Config // nil = plaintext unless the URL scheme asks for TLS
	// Gzip compresses HTTP request bodies and asks for compressed replies.
	Gzip bool
	// GRPCCompression compresses every gRPC request message with this
	// compressor (gzip or deflate, as perf_analyzer's
	// --grpc-compression-algorithm); "" sends them uncompressed.
	GRPCCompression string
	// MaxConnections caps HTTP connections per host (0 = unlimited) and sets
	// the number of gRPC connections requests are spread over (0 = 1).
	// Either way it keeps Infer on the shared connections: callers'
	// own connections (ConnClient) are offered only when it is 0.
	MaxConnections int
	// BusyPoll is how long a worker's own connection polls for a reply
	// before it sleeps in the kernel (0: at once). It trades client CPU
	// for the wake-up latency of a sleeping thread at low concurrency.
	BusyPoll time.Duration
	// JSONTensors sends inputs and asks for outputs as JSON over HTTP instead
	// of the binary tensor data extension. FP16/BF16 stay binary because
	// Triton rejects them in JSON, unless NoBinaryTensors.
	JSONTensors bool
	// NoBinaryTensors says the server lacks the binary tensor data
	// extension (a plain KServe v2 server): every HTTP tensor, FP16 and
	// BF16 included, travels as JSON and no binary-data parameter is sent.
	// It implies JSONTensors.
	NoBinaryTensors bool
	// Dial, when set, opens connections instead of TCP: the URL's host:port
	// is passed as is, so tests can reach a server on an in-memory network.
	// Its timeouts are its own. Nil dials TCP.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

type constructor func(ctx context.Context, opts Options) (Client, error)

var constructors = map[plan.Protocol]constructor{
	plan.ProtocolHTTP: newHTTPClient,
	plan.ProtocolGRPC: newGRPCClient,
}

// New builds the client named by opts.Protocol. It does not contact the
// server; the first call does.
func New(ctx context.Context, opts Options) (Client, error) {
	c, ok := constructors[opts.Protocol]
	if !ok {
		return nil, fmt.Errorf("protocol %q isn't one of [%s, %s]", opts.Protocol, plan.ProtocolGRPC, plan.ProtocolHTTP)
	}
	if opts.URL == "" {
		return nil, fmt.Errorf("%s client: empty server URL", opts.Protocol)
	}
	if opts.BusyPoll < 0 {
		return nil, fmt.Errorf("%s client: busy poll %s is negative", opts.Protocol, opts.BusyPoll)
	}
	if opts.MaxConnections < 0 {
		return nil, fmt.Errorf("%s client: max connections %d is negative", opts.Protocol, opts.MaxConnections)
	}
	return c(ctx, opts)
}

// splitURL returns host:port, whether the scheme asked for TLS, and errors
// for schemes the protocol does not speak.
func splitURL(proto plan.Protocol, raw string) (hostport string, tlsScheme bool, err error) {
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		rest, scheme = raw, ""
	}
	switch scheme {
	case "":
	case "http", "grpc":
	case "https", "grpcs":
		tlsScheme = true
	default:
		return "", false, fmt.Errorf("%s client: URL %q: unsupported scheme %q", proto, raw, scheme)
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.Contains(rest, "/") {
		return "", false, fmt.Errorf("%s client: URL %q must be host:port with an optional scheme and no path", proto, raw)
	}
	return rest, tlsScheme, nil
}

// withTimeout applies opts.Timeout when the caller's deadline is later.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
