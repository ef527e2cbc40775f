package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/runner/plan"
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
		{"silent until the deadline", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, ""},
		{"plaintext", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "it dialled without TLS"},
		{"no certificate", errors.New("tls: client didn't provide a certificate"), "presented no client certificate signed by --agents-tls-client-ca"},
		{"certificate refused", expired, "its client certificate (sha256 e3b0c44298fc1c14…) is not signed by --agents-tls-client-ca: x509: certificate has expired"},
		{"verifier's words escaped", &tls.CertificateVerificationError{Err: errors.New("x509: \"a\nperfscen: forged\" \x1b[31m")},
			`is not signed by --agents-tls-client-ca: x509: "a\nperfscen: forged" \x1b[31m`},
		{"alert escaped", &net.OpError{Op: "remote error", Err: errors.New("tls: \u202ebad")}, `(tls: \u202ebad)`},
		{"other, bounded", errors.New("tls: " + strings.Repeat("y", 1000) + "\n"), "TLS handshake: tls: yyy"},
		{"coordinator not trusted", &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, "the agent did not accept the coordinator's certificate (tls: bad certificate)"},
		{"other", errors.New("tls: no cipher suite supported by both client and server"), "TLS handshake: tls: no cipher suite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := handshakeRefusal(tc.err)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("handshakeRefusal(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if strings.ContainsAny(got, "\n\x1b\u202e") || len(got) > 400 {
				t.Errorf("handshakeRefusal(%v) = %q: not one bounded line", tc.err, got)
			}
		})
	}
}

// On real TCP, where the coordinator's alert and its closing of the
// connection race the agent's first writes: an agent without a client
// certificate is refused with a configuration error, not left to its
// join timeout, and the coordinator names it.
func TestMutualTLSRefusalOverTCP(t *testing.T) {
	ca, caKey := testCert(t, "ca", nil, nil)
	server, serverKey := testCert(t, "coordinator", ca, caKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	var log strings.Builder
	var mu sync.Mutex
	c, err := Listen(CoordinatorOptions{Agents: 1, Listen: "127.0.0.1:0", Version: "v1", Log: lockedWriter{&mu, &log},
		TLS: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{server.Raw}, PrivateKey: serverKey}},
			ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		// Without the refusal noticed, the join ends at its timeout with
		// an environment error (exit 3) instead.
		err := RunAgent(context.Background(), AgentOptions{Coordinator: c.Addr(), Index: -1, Version: "v1",
			Plan: &plan.Plan{}, JoinTimeout: 30 * time.Second,
			TLS: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: v, MaxVersion: v}})
		if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "mutual TLS refused this agent's certificate") {
			t.Fatalf("TLS %x: %v", v, err)
		}
	}
	// An agent dialling without TLS finds out by its probe.
	err = RunAgent(context.Background(), AgentOptions{Coordinator: c.Addr(), Index: -1, Version: "v1",
		Plan: &plan.Plan{}, JoinTimeout: 30 * time.Second})
	if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "it serves TLS and this agent dialled without") {
		t.Fatalf("plaintext: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Each cause named once, however often gRPC retried, then counted
	// (the two agents without a certificate, from one host, are one
	// cause); the probe, which hangs up mid-handshake, is not named.
	if n := strings.Count(log.String(), "refused ") - strings.Count(log.String(), "times so far)"); n != 2 {
		t.Errorf("%d refusals:\n%s", n, log.String())
	}
	// Two agents at least (gRPC may retry before an agent gives up).
	if refused := strings.Join(c.Refused(), "\n"); !regexp.MustCompile(`\(give the agent --tls-cert and --tls-key\) \([2-9] times\)`).MatchString(refused) {
		t.Errorf("refusals:\n%s", refused)
	}
	if !strings.Contains(log.String(), "refused an agent from 127.0.0.1: it dialled without TLS") {
		t.Errorf("coordinator's log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "refused an agent from 127.0.0.1: mutual TLS: it presented no client certificate") {
		t.Errorf("coordinator's log:\n%s", log.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// testCert makes a CA (parent nil) or a server certificate for 127.0.0.1
// signed by parent.
func testCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	} else {
		tmpl.ExtKeyUsage, tmpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// Four bad TLS dials from one host: each is counted, two of the same
// cause (no certificate; one of another CA, which Go's client does not
// send) included, and a connection closed without a word is not. What a
// certificate says of itself is not told: its subject here forges a log
// line.
func TestEveryRefusedHandshakeCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ca, caKey := testCert(t, "ca", nil, nil)
		server, serverKey := testCert(t, "coordinator", ca, caKey)
		otherCA, otherKey := testCert(t, "other ca", nil, nil)
		forged, forgedKey := testCert(t, "x\nperfscen: all 2 agent(s) ready\x1b[2K", otherCA, otherKey)
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		n := memNet()
		var log strings.Builder
		var mu sync.Mutex
		c, err := Listen(CoordinatorOptions{Agents: 2, Listen: testAddr, Version: "v1", Log: lockedWriter{&mu, &log}, Net: n,
			TLS: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{server.Raw}, PrivateKey: serverKey}},
				ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		other := tls.Certificate{Certificate: [][]byte{forged.Raw}, PrivateKey: forgedKey}
		dials := []struct {
			name string
			tls  *tls.Config // nil: plaintext
		}{
			{"no certificate", &tls.Config{MinVersion: tls.VersionTLS13}},
			{"another CA's, not sent", &tls.Config{MaxVersion: tls.VersionTLS12, Certificates: []tls.Certificate{other}}},
			{"another CA's, sent", &tls.Config{MinVersion: tls.VersionTLS13,
				GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &other, nil }}},
			{"plaintext", nil},
			{"silent", nil},
		}
		for _, d := range dials {
			raw, err := n.Dial(t.Context(), "tcp", testAddr)
			if err != nil {
				t.Fatal(err)
			}
			conn := raw
			switch {
			case d.tls != nil:
				d.tls.InsecureSkipVerify = true //nolint:gosec // the coordinator's certificate is not what is tested
				tc := tls.Client(raw, d.tls)
				_ = tc.Handshake()
				conn = tc
			case d.name == "plaintext":
				_, _ = raw.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
			}
			if d.name != "silent" {
				// Until the coordinator hangs up (TLS 1.3 sends its alert
				// after the client's side of the handshake is done).
				_, _ = io.Copy(io.Discard, conn)
			}
			conn.Close()
		}
		synctest.Wait()
		refused := c.Refused()
		total := 0
		for _, r := range refused {
			k := 1
			if i := strings.LastIndex(r, " ("); i >= 0 && strings.HasSuffix(r, " times)") {
				fmt.Sscanf(r[i:], " (%d times)", &k)
			}
			total += k
		}
		all := strings.Join(refused, "\n")
		if total != 4 || !strings.Contains(all, "presented no client certificate signed by --agents-tls-client-ca (give the agent --tls-cert and --tls-key) (2 times)") {
			t.Errorf("%d refusals counted, want 4:\n%s", total, all)
		}
		mu.Lock()
		defer mu.Unlock()
		if testing.Verbose() {
			t.Logf("log:\n%s", log.String())
		}
		for _, line := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
			if !strings.HasPrefix(line, "perfscen: refused an agent from client: ") || strings.ContainsAny(line, "\x1b") {
				t.Errorf("a line of the log not the coordinator's own: %q", line)
			}
		}
		if !strings.Contains(log.String(), "its client certificate (sha256 ") || strings.Contains(log.String()+all, "all 2 agent(s) ready") {
			t.Errorf("log:\n%s\nrefusals:\n%s", log.String(), all)
		}
	})
}
