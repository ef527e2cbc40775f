package fleet

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
)

// What the coordinator says of a failed handshake: a peer that said
// nothing is nobody to name; every other failure names its cause.
func TestHandshakeRefusal(t *testing.T) {
	expired := &tls.CertificateVerificationError{
		UnverifiedCertificates: []*x509.Certificate{{Subject: pkix.Name{CommonName: "agent-3"}}},
		Err:                    errors.New("x509: certificate has expired or is not yet valid"),
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"closed before a word", io.EOF, ""},
		{"closed mid-record", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ""},
		{"plaintext", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "it dialled without TLS"},
		{"no certificate", errors.New("tls: client didn't provide a certificate"), "presented no client certificate signed by --agents-tls-client-ca"},
		{"certificate refused", expired, "its client certificate (CN=agent-3) is not signed by --agents-tls-client-ca: x509: certificate has expired"},
		{"coordinator not trusted", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, "the agent did not accept the coordinator's certificate (tls: bad certificate)"},
		{"other", errors.New("tls: no cipher suite supported by both client and server"), "TLS handshake: tls: no cipher suite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := handshakeRefusal(tc.err)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("handshakeRefusal(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
