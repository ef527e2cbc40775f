package runner

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/runner/plan"
)

// DefaultConnectTimeout bounds how long a run waits for the server to
// answer live/ready before it gives up with exit 3.
const DefaultConnectTimeout = 10 * time.Second

// protocols lists the protocols the plan's points use.
func protocols(p *plan.Plan) []plan.Protocol {
	seen := map[plan.Protocol]bool{}
	for _, pt := range p.Points {
		seen[pt.Protocol] = true
	}
	if len(seen) == 0 {
		seen[p.Server.Protocol] = true
	}
	out := make([]plan.Protocol, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// connect opens one client per protocol and waits until the server says it
// is ready, retrying until the connect timeout: a server that is still
// starting is not a failure, one that never answers is exit 3.
func connect(ctx context.Context, p *plan.Plan, urls map[plan.Protocol]string, connectTimeout time.Duration, dial dialFunc) (map[plan.Protocol]client.Client, error) {
	clients := map[plan.Protocol]client.Client{}
	closeAll := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	for _, proto := range protocols(p) {
		opts, err := clientOptions(p, proto, urls[proto], dial)
		if err != nil {
			closeAll()
			return nil, err
		}
		c, err := client.New(ctx, opts)
		if err != nil {
			closeAll()
			return nil, failure.Invalid(fmt.Errorf("server: %w", err))
		}
		clients[proto] = c
		if err := waitReady(ctx, c, string(proto), urls[proto], connectTimeout); err != nil {
			closeAll()
			return nil, err
		}
	}
	return clients, nil
}

// dialFunc opens a client connection; nil means TCP.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// clientOptions are the plan's settings for one protocol's client.
func clientOptions(p *plan.Plan, proto plan.Protocol, url string, dial dialFunc) (client.Options, error) {
	opts := client.Options{
		Protocol: proto,
		URL:      url,
		Dial:     dial,
		Timeout:  p.Server.Timeout,
		Headers:  p.Server.Headers,
		// gRPC always carries raw tensors; the choice is HTTP's.
		JSONTensors: p.Server.TensorFormat == plan.TensorJSON && proto == plan.ProtocolHTTP,
	}
	if t := p.Server.TLS; t.Enabled {
		cfg, err := client.TLSConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName, t.Insecure)
		if err != nil {
			return opts, failure.Invalid(fmt.Errorf("server.tls: %w", err))
		}
		opts.TLS = cfg
	}
	return opts, nil
}

func waitReady(ctx context.Context, c client.Client, proto, url string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, min(2*time.Second, time.Until(deadline)))
		ready, err := c.ServerReady(cctx)
		cancel()
		if err == nil && ready {
			return nil
		}
		if err == nil {
			err = errors.New("server answered not ready")
		}
		// The final attempt often has only milliseconds left and fails
		// with its own deadline; the attempt before it says why (e.g.
		// connection refused), so keep that one.
		if last == nil || !errors.Is(err, context.DeadlineExceeded) {
			last = err
		}
		if ctx.Err() != nil {
			return failure.Env(fmt.Errorf("connecting to %s server at %s: %w", proto, url, ctx.Err()))
		}
		// A certificate the client refuses will not become acceptable by
		// waiting: say so at once.
		if isCertificateError(err) {
			return failure.Env(fmt.Errorf("server at %s (%s): TLS: %w", url, proto, err))
		}
		if time.Now().After(deadline) {
			return failure.Env(fmt.Errorf("server at %s (%s) not ready within %s: %w", url, proto, timeout, last))
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// isCertificateError recognises TLS verification failures, which gRPC only
// surfaces as text inside an Unavailable status.
func isCertificateError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "x509: ") || strings.Contains(s, "certificate signed by unknown authority")
}
