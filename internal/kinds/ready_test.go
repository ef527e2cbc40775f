package kinds

import (
	"crypto/x509"
	"errors"
	"fmt"
	"testing"
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
