package grpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpcConn is what calls need of a connection.
type grpcConn = grpc.ClientConnInterface

// target is host:port out of a server URL written host:port,
// grpc(s)://host:port or http(s)://host:port.
func target(url string) (string, error) {
	hp := url
	for _, scheme := range []string{"grpc://", "grpcs://", "http://", "https://", "dns:///", "passthrough:///"} {
		if strings.HasPrefix(hp, scheme) {
			hp = strings.TrimPrefix(hp, scheme)
			break
		}
	}
	hp = strings.TrimSuffix(hp, "/")
	host, port, err := net.SplitHostPort(hp)
	if err != nil || port == "" {
		return "", fmt.Errorf("%q: want host:port (or grpc://host:port, grpcs://host:port for TLS)", url)
	}
	if strings.Contains(host, "/") || strings.Contains(port, "/") {
		return "", fmt.Errorf("%q: want host:port, without a path", url)
	}
	return hp, nil
}

// outgoing is the metadata of every call: server.headers (names lower
// case, as HTTP/2 sends them) and the kind block's metadata.
func outgoing(headers, extra map[string]string) metadata.MD {
	md := metadata.MD{}
	for k, v := range headers {
		md.Append(strings.ToLower(k), v)
	}
	for k, v := range extra {
		md.Append(k, v)
	}
	return md
}

// workersPerConn is how many workers share one connection (HTTP/2
// streams multiplex, but one connection is one writer and one reader).
const workersPerConn = 32

// pool holds the connections to the server, opened as workers need them.
type pool struct {
	addr    string
	tls     *tls.Config
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	maxRecv int

	mu    sync.Mutex
	conns []*grpc.ClientConn
}

func (p *pool) get(worker int) (*grpc.ClientConn, error) {
	i := worker / workersPerConn
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.conns) <= i {
		c, err := p.open()
		if err != nil {
			return nil, err
		}
		p.conns = append(p.conns, c)
	}
	return p.conns[i], nil
}

func (p *pool) open() (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if p.tls != nil {
		creds = credentials.NewTLS(p.tls)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.maxRecv)),
		// A server still starting is retried soon, not after grpc-go's
		// default backoff of up to two minutes.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	if p.dial != nil {
		dial := p.dial
		opts = append(opts, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dial(ctx, "tcp", addr)
		}))
	}
	return grpc.NewClient("passthrough:///"+p.addr, opts...)
}

func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// probe opens a call of path and ends it without sending a message. A
// server answers UNIMPLEMENTED for a method it lacks before reading any
// message; a method it has gets a call with no request, which a grpc-go
// unary or server-streaming handler never sees (the message is missing)
// and a client- or bidi-streaming handler sees end at once. nil or any
// status but UNIMPLEMENTED says the method is there.
//
// Python's grpcio answers a unary or server-streaming call that carries
// no message UNIMPLEMENTED too ("requires exactly one request message"),
// for a method it serves. So an UNIMPLEMENTED is asked again with one
// empty message — the default of every protobuf message type — which
// every implementation (grpc-go, grpcio, grpc-java, C++) hands to a
// method it serves and refuses, unread, for one it lacks. The handler then
// runs once with default fields, as the first call of the data does
// before the load anyway.
func probe(ctx context.Context, conn grpcConn, path string) error {
	err := probeWith(ctx, conn, path, false)
	if status.Code(err) != codes.Unimplemented {
		return err
	}
	return probeWith(ctx, conn, path, true)
}

// probeWith is one probe call, with one empty message or none.
//
// A client- or bidi-streaming method may never answer a call that sends
// nothing: etcd's Watch keeps the stream open after the client's
// half-close, waiting for a watch to be created. Waiting out the deadline
// would call a healthy server "not ready" (and a missing method is
// answered UNIMPLEMENTED at once, so a silence says the method is
// there). When the probe has no answer after probeQuiet, a call of a
// method no server has is sent on the same connection: once the server
// has answered that one, it has read the probe's headers too, and a probe
// still unanswered a little later (probeSettle) is a method served.
func probeWith(ctx context.Context, conn grpcConn, path string, empty bool) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	answer, err := openCall(ctx, conn, path, empty)
	if err != nil {
		return err
	}
	quiet := time.NewTimer(probeQuiet)
	defer quiet.Stop()
	select {
	case err := <-answer:
		return err
	case <-quiet.C:
	}
	alive := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		other, err := openCall(ctx, conn, unservedPath, false)
		if err == nil {
			err = <-other
		}
		if answered(err) {
			alive <- time.Since(start)
		}
	}()
	select {
	case err := <-answer:
		return err
	case rtt := <-alive:
		settle := time.NewTimer(max(rtt, probeSettle))
		defer settle.Stop()
		select {
		case err := <-answer:
			return err
		case <-settle.C:
			return nil
		}
	}
}

// openCall opens a call of path, sends one empty message or none, ends
// its sending side, and delivers the call's end on the channel (nil for a
// reply or a clean end, else its status); ctx's end ends it.
func openCall(ctx context.Context, conn grpcConn, path string, empty bool) (<-chan error, error) {
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, path, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return nil, err
	}
	if empty {
		if err := st.SendMsg(&frame{}); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	answer := make(chan error, 1)
	go func() {
		var f frame
		err := st.RecvMsg(&f)
		if errors.Is(err, io.EOF) {
			err = nil
		}
		answer <- err
	}()
	return answer, nil
}

const (
	// probeQuiet is how long a probe waits for its own answer before it
	// asks whether the server answers at all.
	probeQuiet = 50 * time.Millisecond
	// probeSettle is the least time a probe still waits for its answer
	// after the server answered the call sent after it.
	probeSettle = 50 * time.Millisecond
)

// unservedPath is a method no service has: the server answers it (with
// UNIMPLEMENTED, or a proxy's own status) as soon as it reads it.
const unservedPath = "/perfscen.probe.v1.Unserved/Probe"

// answered says whether err is a status the server sent, as opposed to
// the client giving up (deadline, cancel) or no connection.
func answered(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Canceled, codes.Unavailable:
		return false
	}
	return true
}

// wrongProtocol recognises a peer that is not a plain-text gRPC server
// from the connection error grpc-go reports; "" when it is something else.
func wrongProtocol(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "frame too large"), strings.Contains(s, "HTTP/1"):
		return "it speaks HTTP/1.x, not HTTP/2 (an HTTP port, such as Triton's 8000 or TF Serving's REST 8501?)"
	case strings.Contains(s, "first record does not look like a TLS handshake"):
		return "it answers in plain text, not TLS (drop tls, or write grpc:// instead of grpcs://)"
	}
	return ""
}
