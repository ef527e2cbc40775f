package runner

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/plan"
)

func TestProtocolsOfPlan(t *testing.T) {
	p := &plan.Plan{Server: plan.Server{Protocol: "http"}, Points: []plan.Point{{Protocol: "grpc"}, {Protocol: "http"}, {Protocol: "grpc"}}}
	if got := fmt.Sprint(protocols(p)); got != "[grpc http]" {
		t.Fatalf("protocols = %s", got)
	}
	if got := fmt.Sprint(protocols(&plan.Plan{Server: plan.Server{Protocol: "grpc"}})); got != "[grpc]" {
		t.Fatalf("protocols of an empty plan = %s", got)
	}
}

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
		if got := isCertificateError(c.err); got != c.want {
			t.Errorf("isCertificateError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Nothing listens: the run ends with exit 3 once the connect timeout is
// spent, and not much later.
func TestRunUnreachableServerIsEnvironmentFailure(t *testing.T) {
	p := &plan.Plan{Server: plan.Server{URL: "127.0.0.1:1", Protocol: "http", Timeout: time.Second},
		Points: []plan.Point{{Protocol: "http"}}}
	start := time.Now()
	_, err := Run(context.Background(), p, Options{ConnectTimeout: 300 * time.Millisecond})
	if exitcode.Of(err) != exitcode.Environment {
		t.Fatalf("err = %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("gave up after %s with a 300ms connect timeout", time.Since(start))
	}
}
