package grpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// selfSigned writes a certificate for 127.0.0.1 (its own CA) into dir.
func selfSigned(t *testing.T, dir string) (certFile string, cert tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "grpc kind test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return certFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Over TLS, with metadata from server.headers and the kind block on
// every call, preflight's included.
func TestTLSAndMetadata(t *testing.T) {
	dir := t.TempDir()
	caFile, cert := selfSigned(t, dir)
	var mu sync.Mutex
	var seen []metadata.MD
	record := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		seen = append(seen, md)
		mu.Unlock()
		return h(ctx, req)
	}
	addr := serveDemo(t, true, grpc.Creds(credentials.NewServerTLSFromCert(&cert)), grpc.UnaryInterceptor(record))
	copyDemoProto(t, dir)
	opts := map[string]any{"method": "perfscen.demo.v1.Demo/Predict", "proto_files": []any{"protos/perfscen/demo/v1/demo.proto"},
		"import_paths": []any{"protos"}, "metadata": map[string]any{"x-team": "search"}}
	srv := plan.Server{URL: "grpcs://" + addr, Headers: map[string]string{"Authorization": "Bearer t0ken"},
		TLS: plan.TLS{Enabled: true, CAFile: caFile}}
	p := testPlan(dir, srv, opts, jsonModel(t, dir, "predict", `{"data": [{"message": {"model": "identity_fp32", "values": [1]}}]}`))
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if out := call(t, s, p, "predict", 0, false); out.Err != nil {
		t.Fatal(out.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no call reached the handler")
	}
	last := seen[len(seen)-1]
	if got := last.Get("authorization"); len(got) != 1 || got[0] != "Bearer t0ken" {
		t.Errorf("authorization %v", got)
	}
	if got := last.Get("x-team"); len(got) != 1 || got[0] != "search" {
		t.Errorf("x-team %v", got)
	}

	// TLS towards a plain-text port is the scenario's mistake.
	plain := serveDemo(t, true)
	srv.URL = "grpcs://" + plain
	p = testPlan(dir, srv, opts, jsonModel(t, dir, "predict", `{"data": [{"message": {}}]}`))
	if s, err := (Kind{}).Open(context.Background(), p, kinds.Env{ConnectTimeout: time.Second}); err == nil {
		s.Close()
		t.Error("opened a plain-text server with TLS")
	} else if failure.KindOf(err) != failure.InvalidInput || !strings.Contains(err.Error(), "plain text, not TLS") {
		t.Errorf("TLS to plain text: %v", err)
	}
}
