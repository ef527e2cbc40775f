package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/refserver"
)

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all PEM, into dir.
type testPKI struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
}

func newTestPKI(t *testing.T, dir, name string) testPKI {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := testPKI{caFile: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, p.caFile, "CERTIFICATE", caDER)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (string, string) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		cf, kf := filepath.Join(dir, name+"-"+cn+".pem"), filepath.Join(dir, name+"-"+cn+"-key.pem")
		writePEM(t, cf, "CERTIFICATE", der)
		writePEM(t, kf, "EC PRIVATE KEY", kder)
		return cf, kf
	}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth, nil)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	writeFile(t, path, string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})))
}

func tlsScenario(t *testing.T, dir, url, proto, tlsBlock string) string {
	t.Helper()
	return writeFile(t, filepath.Join(dir, proto+".yaml"), fmt.Sprintf(`version: 1
name: tls-%s
server:
  url: %s
  protocol: %s
  timeout: 2s
  tls:
%s
models:
  - name: simple
load:
  mode: iterations
  iterations: 20
thresholds:
  - errors == 0
`, proto, url, proto, indent(tlsBlock, "    ")))
}

// Runs over HTTPS and gRPC+TLS verify the server against the scenario's
// CA, present a client certificate when the server demands one, and fail
// with exit 3 and a certificate message against the wrong CA.
func TestTLSServerAndMutualTLS(t *testing.T) {
	dir := t.TempDir()
	good := newTestPKI(t, dir, "good")
	other := newTestPKI(t, dir, "other")
	plain := startServer(t, refserver.Options{TLS: &refserver.TLSOptions{CertFile: good.serverCert, KeyFile: good.serverKey}})
	mutual := startServer(t, refserver.Options{TLS: &refserver.TLSOptions{CertFile: good.serverCert, KeyFile: good.serverKey, ClientCAFile: good.caFile}})
	addr := func(s *refserver.Server, proto string) string {
		if proto == "grpc" {
			return s.GRPCAddr()
		}
		return "https://" + s.HTTPAddr()
	}
	clientCert := fmt.Sprintf("cert_file: %s\nkey_file: %s", good.clientCert, good.clientKey)
	cases := []struct {
		name     string
		srv      *refserver.Server
		tlsBlock string
		want     int
		stderr   string
	}{
		{"server-auth", plain, "ca_file: " + good.caFile, exitcode.OK, ""},
		{"mutual", mutual, "ca_file: " + good.caFile + "\n" + clientCert, exitcode.OK, ""},
		{"wrong-ca", plain, "ca_file: " + other.caFile, exitcode.Environment, "certificate signed by unknown authority"},
		// Under TLS 1.3 the client learns of a refused certificate after
		// its handshake completes; gRPC's retry may then report only the
		// broken connection, so just the readiness failure is asserted.
		{"mutual-without-client-cert", mutual, "ca_file: " + good.caFile, exitcode.Environment, "not ready within 600ms"},
	}
	for _, c := range cases {
		for _, proto := range []string{"http", "grpc"} {
			t.Run(c.name+"/"+proto, func(t *testing.T) {
				sdir := t.TempDir()
				sc := tlsScenario(t, sdir, addr(c.srv, proto), proto, c.tlsBlock)
				r := runFault(t, context.Background(), "run", sc, "-q", "--out-dir", sdir, "--connect-timeout", "600ms")
				if r.code != c.want {
					t.Fatalf("want exit %d, got %s", c.want, r)
				}
				if c.stderr != "" && !strings.Contains(r.stdout+r.stderr, c.stderr) {
					t.Errorf("output lacks %q:\n%s", c.stderr, r)
				}
			})
		}
	}
}

// The reference server listens on loopback unless told otherwise.
func TestRefserverDefaultsToLoopback(t *testing.T) {
	srv, err := refserver.New(refserver.Options{HTTPAddr: "", GRPCAddr: ""})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		t.Skipf("default ports 8000/8001 are taken on this machine: %v", err)
	}
	defer srv.Close()
	for name, a := range map[string]string{"http": srv.HTTPAddr(), "grpc": srv.GRPCAddr()} {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Errorf("%s listens on %s, want a loopback address", name, a)
		}
	}
}
