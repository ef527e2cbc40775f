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

	"github.com/perfscen/perfscen/internal/kserve/inferencepb"
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
	status := make([]int, 3)
	for i := range status {
		wg.Go(func() { status[i] = do(t, s, "POST", "/v2/models/delay/infer", nil, delayBody()).status })
	}
	time.Sleep(100 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, st := range status {
		if st != 200 {
			t.Errorf("request %d: status %d", i, st)
		}
	}
}

func TestQueueTimeout(t *testing.T) {
	s := startServer(t, Options{Models: []string{"delay"}, ModelParams: map[string]map[string]string{"delay": {"delay": "200ms"}}})
	var wg sync.WaitGroup
	wg.Go(func() { do(t, s, "POST", "/v2/models/delay/infer", nil, delayBody()) })
	time.Sleep(50 * time.Millisecond)
	rep := do(t, s, "POST", "/v2/models/delay/infer", nil,
		[]byte(`{"parameters":{"timeout":1000},"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`))
	wg.Wait()
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
	var wg sync.WaitGroup
	codes := make([]int, 12)
	for i := range codes {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 5 * time.Millisecond)
			codes[i] = do(t, s, "POST", "/v2/models/delay/infer", nil, delayBody()).status
		})
	}
	time.Sleep(25 * time.Millisecond)
	if err := s.UnloadModel("delay"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	ok, rejected := 0, 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case 400, 503:
			rejected++
		default:
			t.Errorf("status %d", c)
		}
	}
	if ok == 0 || rejected == 0 {
		t.Errorf("codes %v: want some served before the unload and some rejected after", codes)
	}
}
