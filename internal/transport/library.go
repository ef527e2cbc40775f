package transport

import (
	"context"
	"crypto/tls"
	"math"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// The library transports: net/http's and grpc-go's, set up as load
// generation needs them. They are what a client uses when a caller has no
// connection of its own (shared connections, a cap on their number,
// streams, admin calls).

// DefaultTLS is the configuration used when a URL scheme asks for TLS but
// none was given: system roots, TLS 1.2 at least, the server name from the
// URL.
func DefaultTLS() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

// HTTPTransportOptions configure NewHTTPTransport.
type HTTPTransportOptions struct {
	TLS *tls.Config // nil: plaintext only
	// Dial, when set, opens connections instead of TCP.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConns caps connections per host; 0 = no cap, with up to 1024
	// kept idle.
	MaxConns int
}

// NewHTTPTransport returns net/http's transport for load: it never goes
// through a proxy (load must reach the server measured, and HTTP_PROXY in
// a CI environment would silently measure the proxy), never compresses
// on its own (compression is the caller's explicit choice, so that Go's
// transparent gzip never skews the measured decode time), and keeps enough
// idle connections that no request pays a fresh handshake at steady state.
func NewHTTPTransport(o HTTPTransportOptions) *http.Transport {
	idle := o.MaxConns
	if idle == 0 {
		idle = 1024
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	var cfg *tls.Config
	if o.TLS != nil {
		cfg = o.TLS.Clone() // the transport may mutate it
	}
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dial,
		TLSClientConfig:     cfg,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     o.MaxConns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// GRPCDialOptions configure GRPCDial.
type GRPCDialOptions struct {
	TLS *tls.Config // nil: plaintext
	// Dial, when set, opens connections instead of TCP; the target is
	// passed to it unresolved.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Metadata goes on every call; keys lowercase.
	Metadata map[string]string
	// Compression names the compressor of every request message (gzip,
	// deflate); "" sends them uncompressed (GRPCCompressor checks it).
	Compression string
}

// GRPCDial returns a grpc-go connection to target (host:port) set up for
// load: messages up to INT32_MAX both ways (Triton allows them; grpc-go
// defaults to 4 MiB) and fixed flow-control windows: GRPCWindow per
// stream and four times that for the connection, which grpc-go shares
// among every stream in flight. Fixed windows turn off grpc-go's
// bandwidth-delay estimation, whose pings and window updates were half an
// extra write per request at concurrency 1, and windows past a 4.9 MB
// image keep large tensors from waiting on window updates.
func GRPCDial(target string, o GRPCDialOptions) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS.Clone())
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
		grpc.WithInitialWindowSize(GRPCWindow),
		grpc.WithInitialConnWindowSize(4 * GRPCWindow),
		// A call's wait, as the own connection measures it (grpcwait.go).
		grpc.WithStatsHandler(waitStats{}),
	}
	if o.Dial != nil {
		// passthrough hands the address to the dialer unresolved.
		target = "passthrough:///" + target
		dial := o.Dial
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		}))
	}
	if len(o.Metadata) > 0 {
		opts = append(opts, grpc.WithPerRPCCredentials(headerCreds{md: o.Metadata}))
	}
	if o.Compression != "" {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.UseCompressor(o.Compression)))
	}
	return grpc.NewClient(target, opts...)
}

// headerCreds sends metadata on every call without a per-call context
// allocation.
type headerCreds struct {
	md map[string]string
}

func (h headerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return h.md, nil
}

// RequireTransportSecurity is false so plaintext test servers work; users
// sending tokens should configure TLS.
func (h headerCreds) RequireTransportSecurity() bool { return false }
