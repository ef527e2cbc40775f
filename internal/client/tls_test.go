package client

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/perfscen/perfscen/internal/kserve/inferencepb"
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
	cfg, err := TLSConfig(caFile, "", "", "example.com", false)
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

	for _, opts := range []Options{
		{Protocol: "http", URL: hs.URL, TLS: cfg},
		{Protocol: "grpc", URL: lis.Addr().String(), TLS: cfg},
	} {
		t.Run(opts.Protocol, func(t *testing.T) {
			c := newClient(t, opts)
			resp, err := c.Infer(context.Background(), simpleRequest("tls"))
			if err != nil {
				t.Fatal(err)
			}
			checkSimpleOutput(t, resp, "OUTPUT0", 1)
			// Without the CA the handshake must fail as a transport error.
			plain := opts
			plain.TLS, _ = TLSConfig("", "", "", "example.com", false)
			c2 := newClient(t, plain)
			if _, err := c2.Infer(context.Background(), simpleRequest("")); err == nil {
				t.Error("untrusted certificate accepted")
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
		if _, err := TLSConfig(args[0], args[1], args[2], "", false); err == nil {
			t.Errorf("TLSConfig(%q) succeeded", args)
		}
	}
}
