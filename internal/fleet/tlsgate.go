package fleet

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc/credentials"
)

// serverGate is the coordinator's TLS with a witness: an agent whose
// handshake fails never reaches Join, so without it an agent refused by
// mutual TLS would be refused by nobody in particular. It names the
// agent by its address, as a wrong token is named.
type serverGate struct {
	credentials.TransportCredentials
	refused func(addr, why string)
}

func (g serverGate) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := g.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		if why := handshakeRefusal(err); why != "" {
			// Every refused handshake is told, the same agent's retries
			// and two agents on one host alike: the ledger counts them
			// by host and cause and bounds what is kept and logged.
			g.refused(raw.RemoteAddr().String(), why)
		}
	}
	return conn, info, err
}

func (g serverGate) Clone() credentials.TransportCredentials {
	return serverGate{g.TransportCredentials.Clone(), g.refused}
}

// handshakeRefusal says why the coordinator's handshake refused a peer,
// or "" for a connection that closed before it said anything (a TCP
// health check, the agent's own reachability probe): that is nobody to
// name.
func handshakeRefusal(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		// A connection held open without a word until the server's
		// handshake deadline is no agent either.
		return ""
	}
	var header tls.RecordHeaderError
	if errors.As(err, &header) {
		return "it dialled without TLS; this coordinator serves TLS (give the agent --tls-ca)"
	}
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) {
		// Nothing the certificate says of itself is told: it is not
		// verified (its subject may hold a newline that forges a log
		// line). Its digest is a fact about the bytes presented, and
		// the verifier's words are escaped and bounded.
		cert := ""
		if len(verify.UnverifiedCertificates) > 0 {
			sum := sha256.Sum256(verify.UnverifiedCertificates[0].Raw)
			cert = " (sha256 " + hex.EncodeToString(sum[:8]) + "…)"
		}
		return fmt.Sprintf("mutual TLS: its client certificate%s is not signed by --agents-tls-client-ca: %s", cert, clean(verify.Err.Error(), maxPeerText))
	}
	if strings.Contains(err.Error(), "didn't provide a certificate") {
		// Go's client sends none when it has none signed by a CA the
		// coordinator asked for: this is also the certificate of another CA.
		return "mutual TLS: it presented no client certificate signed by --agents-tls-client-ca (give the agent --tls-cert and --tls-key)"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return fmt.Sprintf("TLS: the agent did not accept the coordinator's certificate (%s)", clean(op.Err.Error(), maxPeerText))
	}
	// crypto/tls's words may quote what the peer sent (its protocols,
	// its versions): escaped and bounded.
	return "TLS handshake: " + clean(err.Error(), maxPeerText)
}

// clientGate is an agent's TLS with a witness: a coordinator that refuses
// the agent's certificate says so with a TLS alert, which gRPC would
// only retry until the join timeout. refused hears it at once, and of a
// coordinator certificate the agent cannot verify, so the agent stops
// with a configuration error instead of waiting.
type clientGate struct {
	credentials.TransportCredentials
	refused func(error)
}

func (g clientGate) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := g.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		var verify *tls.CertificateVerificationError
		switch {
		case errors.As(err, &verify):
			g.refused(fmt.Errorf("its certificate is not one this agent trusts (--tls-ca, --tls-server-name): %w", err))
		case isAlert(err):
			g.refused(fmt.Errorf("mutual TLS refused this agent's certificate (--tls-cert): %w", err))
		}
		return conn, info, err
	}
	return alertConn{Conn: conn, refused: g.refused}, info, nil
}

func (g clientGate) Clone() credentials.TransportCredentials {
	return clientGate{g.TransportCredentials.Clone(), g.refused}
}

// alertConn notices the alert of a coordinator that, in TLS 1.3, checks
// the agent's certificate after the agent's side of the handshake has
// already finished: it arrives with the first read.
type alertConn struct {
	net.Conn
	refused func(error)
}

func (c alertConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && isAlert(err) {
		c.refused(fmt.Errorf("mutual TLS refused this agent's certificate (--tls-cert): %w", err))
	}
	return n, err
}

// isAlert is a TLS alert from the peer: crypto/tls reports one as a
// *net.OpError whose Op is "remote error".
func isAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// plainGate is a plaintext agent's witness: a coordinator that serves
// TLS closes a plaintext connection without sending a byte, which gRPC
// would retry until the join timeout. silent hears of each such close;
// the agent then asks the coordinator whether it speaks TLS (speaksTLS).
type plainGate struct {
	credentials.TransportCredentials
	silent func()
}

func (g plainGate) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := g.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		return conn, info, err
	}
	return &silentConn{Conn: conn, silent: g.silent}, info, nil
}

func (g plainGate) Clone() credentials.TransportCredentials {
	return plainGate{g.TransportCredentials.Clone(), g.silent}
}

// silentConn tells when its connection ends before a byte came back.
type silentConn struct {
	net.Conn
	got    atomic.Bool
	silent func()
}

func (c *silentConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.got.Store(true)
	}
	if err != nil && !c.got.Load() {
		c.silent()
	}
	return n, err
}

// errSeen ends a TLS probe once the server has shown its certificate.
var errSeen = errors.New("the server answered in TLS")

// speaksTLS says whether the server at dial answers a TLS ClientHello.
// The probe drops the connection as soon as the server's certificate
// arrives, before it could send or prove anything, so the server sees a
// connection that closed mid-handshake (nobody to name), not a second
// refusal.
func speaksTLS(ctx context.Context, dial func(context.Context) (net.Conn, error)) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	raw, err := dial(ctx)
	if err != nil {
		return false
	}
	defer raw.Close()
	var saw atomic.Bool
	// Nothing is sent over this connection: skipping verification only
	// lets the callback see that a certificate came.
	c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, //nolint:gosec
		VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
			saw.Store(true)
			raw.Close()
			return errSeen
		}})
	_ = c.HandshakeContext(ctx)
	return saw.Load()
}
