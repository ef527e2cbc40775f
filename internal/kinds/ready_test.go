package kinds

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
)

func TestIsCertificateError(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("dial: %w", x509.UnknownAuthorityError{}), true},
		{errors.New(`rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`), true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
	}
	for _, c := range cases {
		if got := IsCertificateError(c.err); got != c.want {
			t.Errorf("IsCertificateError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A server that refuses every connection from the start is given up
// after RefusedGrace, not the whole connect timeout; one that accepted
// once, or an explicit timeout, gets the whole wait.
func TestWaitReadyRefused(t *testing.T) {
	refused := func(context.Context) (bool, error) {
		return false, fmt.Errorf("dial tcp 127.0.0.1:1: %w", syscall.ECONNREFUSED)
	}
	notReady := func(context.Context) (bool, error) { return false, nil }
	for _, tt := range []struct {
		name    string
		ready   func(context.Context) (bool, error)
		timeout time.Duration
		want    time.Duration
	}{
		{"refused from the start", refused, 0, RefusedGrace},
		{"answers, not ready", notReady, 0, DefaultConnectTimeout},
		{"refused, explicit timeout", refused, 20 * time.Second, 20 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			err := WaitReady(t.Context(), tt.ready, "server at 127.0.0.1:1 (http)", tt.timeout)
			took := time.Since(start)
			if err == nil || failure.KindOf(err) != failure.Environment {
				t.Fatalf("%s: err %v", tt.name, err)
			}
			if took < tt.want || took > tt.want+time.Second {
				t.Errorf("%s: gave up after %s, want about %s (%v)", tt.name, took, tt.want, err)
			}
			if strings.Count(err.Error(), "connection refused") > 1 {
				t.Errorf("%s: message repeats itself: %v", tt.name, err)
			}
		})
	}
}
