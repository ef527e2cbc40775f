package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// startServer runs a server on loopback ports chosen by the OS.
func startServer(t testing.TB, opts Options) *Server {
	t.Helper()
	opts.HTTPAddr, opts.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 2 * time.Second
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func grpcConn(t testing.TB, s *Server) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func grpcClient(t testing.TB, s *Server) inferencepb.GRPCInferenceServiceClient {
	return inferencepb.NewGRPCInferenceServiceClient(grpcConn(t, s))
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// waitAccepted waits until model has queued n requests since it loaded:
// the server-side state a test needs before it unloads or closes, where a
// sleep would only make that likely.
func waitAccepted(t testing.TB, s *Server, model string, n int) {
	t.Helper()
	m, ok := s.repo.get(model)
	if !ok {
		t.Fatalf("model %s is not loaded", model)
	}
	deadline := time.Now().Add(30 * time.Second)
	for m.sched.acceptedJobs() < n {
		if time.Now().After(deadline) {
			t.Fatalf("model %s accepted %d of %d requests in 30s", model, m.sched.acceptedJobs(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// doAsync sends one HTTP request like do, from any goroutine: failures
// come back as an error for the test goroutine to report.
func doAsync(s *Server, method, path string, body []byte) (httpReply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.HTTPAddr()+path, bytes.NewReader(body))
	if err != nil {
		return httpReply{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return httpReply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}, err
}

// do sends one HTTP request with a bounded timeout.
func do(t testing.TB, s *Server, method, path string, header map[string]string, body []byte) httpReply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.HTTPAddr()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// acceptedJobs is how many jobs submit has queued since the start.
func (s *scheduler) acceptedJobs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}
