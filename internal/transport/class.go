package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/perfscen/perfscen/runner/plan"
)

// Class names the kind of a failed call in a few words, the same for
// every server and connection, so that failures can be counted by kind:
// "connection refused", "timeout", "HTTP 500", "gRPC Unavailable",
// "malformed reply". A run against a server that went away reports
// hundreds of thousands of refused connections behind a few dozen errors
// from its shutdown: counted by class, the dominant one shows.
func Class(err error) string {
	if err == nil {
		return ""
	}
	var se *ServerError
	if errors.As(err, &se) {
		if se.Protocol == plan.ProtocolHTTP || se.HTTPStatus != 0 {
			return "HTTP " + strconv.Itoa(se.HTTPStatus)
		}
		return "gRPC " + se.GRPCCode.String()
	}
	var pe *ProtocolError
	if errors.As(err, &pe) {
		return "malformed reply"
	}
	if !errors.Is(err, ErrUnavailable) {
		return "other"
	}
	return unreachableClass(err)
}

// unreachableClass sorts a transport failure by its cause. grpc-go's
// failures arrive as status text, so the text is read when the chain does
// not say.
func unreachableClass(err error) string {
	var dns *net.DNSError
	var rec tls.RecordHeaderError
	var alert tls.AlertError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var cert x509.CertificateInvalidError
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case errors.As(err, &dns):
		return "DNS"
	case errors.As(err, &rec), errors.As(err, &alert), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &cert):
		return "TLS"
	}
	msg := err.Error()
	for _, c := range []struct{ text, class string }{
		{"connection refused", "connection refused"},
		{"connection reset", "connection reset"},
		{"broken pipe", "connection reset"},
		{"EOF", "connection reset"},
		{"deadline", "timeout"},
		{"timeout", "timeout"},
		{"no such host", "DNS"},
		{"tls:", "TLS"},
		{"x509:", "TLS"},
	} {
		if strings.Contains(msg, c.text) {
			return c.class
		}
	}
	return "unreachable"
}
