package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"google.golang.org/grpc"

	"github.com/perfscen/perfscen/internal/kservev2"
	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
)

// The benchmark servers answer with a canned reply so that allocs/op is
// dominated by the client (the server's own net/http or grpc-go work in this
// process is still counted).

func BenchmarkHTTPInfer(b *testing.B) {
	sum, diff, _ := addSub(make([]byte, 64), make([]byte, 64))
	header := []byte(`{"model_name":"simple","model_version":"1","outputs":[` +
		`{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},` +
		`{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`)
	reply := kservev2.EncodeBinaryBody(header, sum, diff)
	hl, cl := strconv.Itoa(len(header)), strconv.Itoa(len(reply))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		h[kservev2.HeaderContentLength] = []string{hl}
		h["Content-Length"] = []string{cl}
		h["Content-Type"] = []string{"application/octet-stream"}
		w.Write(reply)
	}))
	b.Cleanup(srv.Close)
	c := newClient(b, Options{Protocol: "http", URL: srv.URL})
	benchInfer(b, c)
}

type cannedGRPC struct {
	pb.UnimplementedGRPCInferenceServiceServer
	resp *pb.ModelInferResponse
}

func (s *cannedGRPC) ModelInfer(context.Context, *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	return s.resp, nil
}

func BenchmarkGRPCInfer(b *testing.B) {
	c := newClient(b, Options{Protocol: "grpc", URL: cannedGRPCServer(b)})
	benchInfer(b, c)
}

// BenchmarkGRPCConnInfer is BenchmarkGRPCInfer on a connection of the
// caller's own: the same server, no transport goroutines on the client.
func BenchmarkGRPCConnInfer(b *testing.B) {
	c := newClient(b, Options{Protocol: "grpc", URL: cannedGRPCServer(b)})
	conn := c.(ConnClient).NewConn()
	b.Cleanup(func() { conn.Close() })
	req := simpleRequest("")
	req.Parameters = nil
	ctx := context.Background()
	if _, err := conn.Infer(ctx, req, 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Infer(ctx, req, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// cannedGRPCServer serves one fixed ModelInfer reply (simple's two INT32
// outputs) on a loopback port, so profiles show mostly the client.
func cannedGRPCServer(b *testing.B) string {
	sum, diff, _ := addSub(make([]byte, 64), make([]byte, 64))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(s, &cannedGRPC{resp: &pb.ModelInferResponse{
		ModelName: "simple", ModelVersion: "1",
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{
			{Name: "OUTPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "OUTPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawOutputContents: [][]byte{sum, diff},
	}})
	go s.Serve(lis)
	b.Cleanup(s.Stop)
	return lis.Addr().String()
}

func benchInfer(b *testing.B, c Client) {
	req := simpleRequest("")
	req.Parameters = nil
	ctx := context.Background()
	if _, err := c.Infer(ctx, req); err != nil { // warm the connection
		b.Fatal(err)
	}
	b.ReportAllocs()
	var sendRecv, wait int64
	for b.Loop() {
		resp, err := c.Infer(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		sendRecv += int64(resp.Timing.SendRecv)
		wait += int64(resp.Timing.Wait)
	}
	b.ReportMetric(float64(sendRecv)/float64(b.N), "sendrecv-ns/op")
	b.ReportMetric(float64(wait)/float64(b.N), "wait-ns/op")
}
