package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/memnet"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// A server may give its status before it has read a large request: a
// trailers-only RESOURCE_EXHAUSTED while the client still has megabytes
// to send. On both kinds of connection the call must end at once with
// the server's status (not at its deadline, blocked on a flow-control
// window the server will never open), and the next call must work,
// on the same connection or on a clean new one.

// earlyCallTimeout is every call's deadline: on testing/synctest's clock
// a call that waits for a window the server never opens ends exactly
// there, and one that ends with the server's status takes no time.
const earlyCallTimeout = time.Minute

// largeSimpleRequest is simple's request with a 4.9 MB INPUT0 (the seeds'
// image size): far beyond any server's initial 64 KiB window.
func largeSimpleRequest() *InferRequest {
	req := simpleRequest("")
	req.Inputs[0].Tensor = tensor.Tensor{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1, 1_228_800}, Raw: make([]byte, 4*1_228_800)}
	return req
}

// earlyInfer returns the infer of one connection kind to the server at
// addr on mem: the shared grpc-go client, or perfscen's own connection.
func earlyInfer(t *testing.T, kind string, mem *memnet.Network, addr string) func(*InferRequest) (*InferResponse, error) {
	opts := Options{Protocol: "grpc", URL: addr, Dial: mem.Dial, Timeout: earlyCallTimeout}
	c := newClient(t, opts)
	if kind == "library" {
		return func(req *InferRequest) (*InferResponse, error) { return c.Infer(context.Background(), req) }
	}
	conn := c.(ConnClient).NewConn()
	if conn == nil {
		t.Fatal("NewConn returned nil")
	}
	t.Cleanup(func() { conn.Close() })
	return func(req *InferRequest) (*InferResponse, error) {
		return conn.Infer(context.Background(), req, earlyCallTimeout)
	}
}

// checkEarly sends the large request and wants code with a message
// holding msg, and no time spent on the fake clock.
func checkEarly(t *testing.T, infer func(*InferRequest) (*InferResponse, error), code codes.Code, msg string) {
	t.Helper()
	start := time.Now()
	_, err := infer(largeSimpleRequest())
	took := time.Since(start)
	var se *transport.ServerError
	if !errors.As(err, &se) || se.GRPCCode != code || !strings.Contains(se.Message, msg) {
		t.Fatalf("large request: %v (after %v), want the server's %v %q", err, took, code, msg)
	}
	if took != 0 {
		t.Errorf("large request ended %v after it began, on a clock that moves only when every goroutine waits: it waited for something after the server's status", took)
	}
}

// The fake answers its first request at the request's HEADERS, reading
// none of its DATA: trailers-only RESOURCE_EXHAUSTED, then RST_STREAM
// NO_ERROR, as HTTP/2 lets a server that has answered stop the rest of a
// request. Later requests get simple's reply.
func TestGRPCStatusBeforeLargeRequestIsSent(t *testing.T) {
	for _, kind := range []string{"library", "own"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				lis, err := mem.Listen(context.Background(), "tcp", "server:1")
				if err != nil {
					t.Fatal(err)
				}
				ok := simpleReplyMsg(t)
				var answered atomic.Int64
				fake := h2test.Serve(t, lis, nil)
				fake.OnHeaders = func(r *h2test.Reply) {
					if answered.Add(1) == 1 {
						r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
							{Name: "grpc-status", Value: fmt.Sprint(int(codes.ResourceExhausted))}, {Name: "grpc-message", Value: "request too large"}})
						r.RST(http2.ErrCodeNo)
						return
					}
					r.OK(ok)
				}
				infer := earlyInfer(t, kind, &mem, "server:1")
				checkEarly(t, infer, codes.ResourceExhausted, "request too large")
				for i := range 2 {
					resp, err := infer(simpleRequest(""))
					if err != nil {
						t.Fatalf("call %d after the early status: %v", i+1, err)
					}
					checkSimpleOutput(t, resp, "OUTPUT0", 1)
				}
				// The own connection leaves a stream it could not finish
				// and takes a new connection; it must not open a third.
				if n := fake.Conns(); n > 2 {
					t.Errorf("three calls took %d connections", n)
				}
			})
		})
	}
}

// The same with a real grpc-go server whose message limit is 1 MiB: it
// reads the message's prefix, refuses the length and answers while the
// rest is still on its way.
func TestGRPCServerRefusesLargeRequestEarly(t *testing.T) {
	for _, kind := range []string{"library", "own"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mem memnet.Network
				lis, err := mem.Listen(context.Background(), "tcp", "server:1")
				if err != nil {
					t.Fatal(err)
				}
				s := grpc.NewServer(grpc.MaxRecvMsgSize(1 << 20))
				pb.RegisterGRPCInferenceServiceServer(s, &fakeGRPC{})
				go s.Serve(lis)
				defer s.Stop()
				infer := earlyInfer(t, kind, &mem, "server:1")
				checkEarly(t, infer, codes.ResourceExhausted, "larger than max")
				for i := range 2 {
					resp, err := infer(simpleRequest(""))
					if err != nil {
						t.Fatalf("call %d after the early status: %v", i+1, err)
					}
					checkSimpleOutput(t, resp, "OUTPUT0", 1)
				}
			})
		})
	}
}
