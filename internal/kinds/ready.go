package kinds

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
)

// DefaultConnectTimeout bounds how long a run waits for a server to answer
// its readiness check before it gives up with exit 3.
const DefaultConnectTimeout = 10 * time.Second

// WaitReady asks ready until the server says yes, retrying until timeout
// (DefaultConnectTimeout when 0): a server that is still starting is not a
// failure, one that never answers is exit 3. what names the endpoint in
// errors ("http server at host:port").
func WaitReady(ctx context.Context, ready func(context.Context) (bool, error), what string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	deadline := time.Now().Add(timeout)
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
		if time.Now().After(deadline) {
			return failure.Env(fmt.Errorf("%s not ready within %s: %w", what, timeout, last))
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
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
