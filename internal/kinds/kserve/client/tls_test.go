package client

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
)

// TestTLS runs both clients against TLS servers using the httptest
// certificate, trusted through a CA file as a user would configure it.
func TestTLS(t *testing.T) {
	fh := &fakeHTTP{}
	hs := httptest.NewUnstartedServer(fh)
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the rejected handshake below is expected
	hs.StartTLS()
	t.Cleanup(hs.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := transport.TLSConfig(caFile, "", "", "example.com", false)
	if err != nil {
		t.Fatal(err)
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(hs.TLS.Clone())))
	fg := &fakeGRPC{}
	pb.RegisterGRPCInferenceServiceServer(gs, fg)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)

	for _, v := range []variant{
		{"http", Options{Protocol: "http", URL: hs.URL, TLS: cfg}, false},
		{"grpc", Options{Protocol: "grpc", URL: lis.Addr().String(), TLS: cfg}, false},
		{"grpc-own", Options{Protocol: "grpc", URL: lis.Addr().String(), TLS: cfg}, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			resp, err := inferer(t, v, newClient(t, v.opts))(context.Background(), simpleRequest("tls"))
			if err != nil {
				t.Fatal(err)
			}
			checkSimpleOutput(t, resp, "OUTPUT0", 1)
			// Without the CA the handshake must fail as a transport error.
			plain := v
			plain.opts.TLS, _ = transport.TLSConfig("", "", "", "example.com", false)
			if _, err := inferer(t, plain, newClient(t, plain.opts))(context.Background(), simpleRequest("")); !errors.Is(err, transport.ErrUnavailable) {
				t.Errorf("untrusted certificate: %v, want a transport error", err)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not pem"), 0o600)
	for _, args := range [][3]string{
		{filepath.Join(dir, "missing.pem"), "", ""},
		{bad, "", ""},
		{"", "cert.pem", ""},
		{"", bad, bad},
	} {
		if _, err := transport.TLSConfig(args[0], args[1], args[2], "", false); err == nil {
			t.Errorf("TLSConfig(%q) succeeded", args)
		}
	}
}
