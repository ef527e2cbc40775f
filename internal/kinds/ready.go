package kinds

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
)

// DefaultConnectTimeout bounds how long a run waits for a server to answer
// its readiness check before it gives up with exit 3.
const DefaultConnectTimeout = 10 * time.Second

// RefusedGrace is how long a run keeps retrying a server that has
// refused every connection since the first attempt, when no connect
// timeout was chosen: nothing listens there, and waiting out the whole
// DefaultConnectTimeout only delays the exit 3. A server that accepted a
// connection once (and is, say, still loading models) gets the whole
// timeout; so does any server when the timeout is set explicitly (a
// server that binds its port late).
const RefusedGrace = 3 * time.Second

// WaitReady asks ready until the server says yes, retrying until timeout
// (DefaultConnectTimeout when 0, with a server that refuses every
// connection given up after RefusedGrace): a server that is still
// starting is not a failure, one that never answers is exit 3. what
// names the endpoint in errors ("http server at host:port").
func WaitReady(ctx context.Context, ready func(context.Context) (bool, error), what string, timeout time.Duration) error {
	grace := time.Duration(0)
	if timeout <= 0 {
		timeout, grace = DefaultConnectTimeout, RefusedGrace
	}
	start := time.Now()
	deadline := start.Add(timeout)
	refusedOnly := true
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, min(2*time.Second, time.Until(deadline)))
		ok, err := ready(cctx)
		cancel()
		if err == nil && ok {
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
			return failure.Env(fmt.Errorf("connecting to %s: %w", what, ctx.Err()))
		}
		// A certificate the client refuses will not become acceptable by
		// waiting: say so at once.
		if IsCertificateError(err) {
			return failure.Env(fmt.Errorf("%s: TLS: %w", what, err))
		}
		refusedOnly = refusedOnly && IsConnectionRefused(err)
		if grace > 0 && refusedOnly && time.Since(start) >= grace {
			return failure.Env(fmt.Errorf("%s refused every connection for %s (nothing listens there; set --connect-timeout to wait longer for a server that binds its port late): %w",
				what, grace, last))
		}
		if time.Now().After(deadline) {
			return failure.Env(fmt.Errorf("%s not ready within %s: %w", what, timeout, last))
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// IsConnectionRefused recognises a refused TCP connection, which gRPC
// only surfaces as text inside an Unavailable status.
func IsConnectionRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused")
}

// IsCertificateError recognises TLS verification failures, which gRPC only
// surfaces as text inside an Unavailable status.
func IsCertificateError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "x509: ") || strings.Contains(s, "certificate signed by unknown authority")
}
