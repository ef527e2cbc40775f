package refserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

func delayBody() []byte {
	return []byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`)
}

// Close lets requests already executing finish before it returns.
func TestCloseWaitsForInFlight(t *testing.T) {
	s, err := New(Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "-", Models: []string{"delay"},
		ModelParams: map[string]map[string]string{"delay": {"delay": "300ms"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	replies := make([]httpReply, 3)
	errs := make([]error, 3)
	for i := range replies {
		wg.Go(func() { replies[i], errs[i] = doAsync(s, "POST", "/v2/models/delay/infer", delayBody()) })
	}
	waitAccepted(t, s, "delay", len(replies))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, r := range replies {
		if errs[i] != nil || r.status != 200 {
			t.Errorf("request %d: status %d, %v", i, r.status, errs[i])
		}
	}
}

func TestQueueTimeout(t *testing.T) {
	// One instance busy for a second; the second request may wait 1 ms.
	s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{"delay": {"delay": "1s"}}})
	var wg sync.WaitGroup
	var firstErr error
	wg.Go(func() { _, firstErr = doAsync(s, "POST", "/v2/models/delay/infer", delayBody()) })
	waitAccepted(t, s, "delay", 1)
	rep := do(t, s, "POST", "/v2/models/delay/infer", nil,
		[]byte(`{"parameters":{"timeout":1000},"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`))
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if rep.status != http.StatusServiceUnavailable {
		t.Fatalf("queued past its timeout: %d %s", rep.status, rep.body)
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "refserver-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func TestTLSBothProtocols(t *testing.T) {
	cert, pool := selfSigned(t)
	s := startServer(t, Options{Models: []string{"simple"}, TLS: &TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{cert}}}})
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	resp, err := hc.Get("https://" + s.HTTPAddr() + "/v2/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("https ready: %d", resp.StatusCode)
	}
	cc, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := inferencepb.NewGRPCInferenceServiceClient(cc).ModelInfer(ctx, simpleGRPCRequest("tls"))
	if err != nil {
		t.Fatal(err)
	}
	checkSimpleRaw(t, r)
	// Plaintext HTTP against the TLS listener must not be served.
	if rep, err := http.Get("http://" + s.HTTPAddr() + "/v2/health/ready"); err == nil {
		rep.Body.Close()
		if rep.StatusCode == 200 {
			t.Fatal("plaintext request served by the TLS listener")
		}
	}
}

// Unloading under load: requests already queued finish, later ones get a
// clean error, and nothing hangs or panics.
func TestUnloadUnderLoad(t *testing.T) {
	s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{"delay": {"delay": "20ms", "instance_count": "2"}}})
	// Six requests reach the model (two executing, four queued) before the
	// unload; all of them must be served. Requests after it are refused.
	const before = 6
	var wg sync.WaitGroup
	replies := make([]httpReply, before)
	errs := make([]error, before)
	for i := range replies {
		wg.Go(func() { replies[i], errs[i] = doAsync(s, "POST", "/v2/models/delay/infer", delayBody()) })
	}
	waitAccepted(t, s, "delay", before)
	if err := s.UnloadModel("delay"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, r := range replies {
		if errs[i] != nil || r.status != 200 {
			t.Errorf("request %d, queued before the unload: status %d, %v %s", i, r.status, errs[i], r.body)
		}
	}
	for i := range 3 {
		if r := do(t, s, "POST", "/v2/models/delay/infer", nil, delayBody()); r.status != 404 && r.status != 503 {
			t.Errorf("request %d after the unload: status %d %s, want 404 (Triton: no available versions) or 503", i, r.status, r.body)
		}
	}
}
