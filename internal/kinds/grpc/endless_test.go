package grpc

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// serveEndless serves every method as a server stream that never ends:
// an empty reply every millisecond until the client goes, as etcd's Watch
// keeps a stream open after a client's half-close.
func serveEndless(t *testing.T) string {
	t.Helper()
	g := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var in frame
		if err := st.RecvMsg(&in); err != nil {
			return err
		}
		for {
			if err := st.SendMsg(&frame{}); err != nil {
				return err
			}
			select {
			case <-st.Context().Done():
				return st.Context().Err()
			case <-time.After(time.Millisecond):
			}
		}
	}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// A stream the server never ends is measured with server.grpc.replies:
// each call ends after that many replies, a success. Without it the call
// runs to its deadline and fails saying the server kept the stream open
// (it was "server unreachable" before, though the server replied).
func TestEndlessStream(t *testing.T) {
	addr := serveEndless(t)
	protos := filepath.Join("testdata", "protos")
	places := []any{filepath.Join(protos, "service/places/v1/places.proto")}
	paths := []any{filepath.Join(protos, "vendor"), filepath.Join(protos, "service")}
	for _, tc := range []struct {
		replies int
		want    string
	}{
		{3, ""},
		{0, "the server sent"},
	} {
		dir := t.TempDir()
		opts := map[string]any{"method": "places.v1.Places/Within", "proto_files": places, "import_paths": paths, "deadline": "300ms"}
		if tc.replies > 0 {
			opts["replies"] = tc.replies
		}
		abs := func(v []any) []any {
			out := make([]any, len(v))
			for i, p := range v {
				a, _ := filepath.Abs(p.(string))
				out[i] = a
			}
			return out
		}
		opts["proto_files"], opts["import_paths"] = abs(places), abs(paths)
		p := testPlan(dir, plan.Server{URL: addr}, opts, jsonModel(t, dir, "within", `{"data": [{"message": {"limit": 3}}]}`))
		s, err := Kind{}.Open(context.Background(), p, kinds.Env{})
		if err != nil {
			t.Fatalf("replies %d: %v", tc.replies, err)
		}
		out := call(t, s, p, "within", 0, false)
		s.Close()
		switch {
		case tc.want == "" && (out.Err != nil || out.Responses != tc.replies):
			t.Errorf("replies %d: %+v, want a success of %d replies", tc.replies, out, tc.replies)
		case tc.want != "":
			var se *transport.ServerError
			if !errors.As(out.Err, &se) || se.GRPCCode != codes.DeadlineExceeded || !strings.Contains(out.Err.Error(), tc.want) ||
				!strings.Contains(out.Err.Error(), "server.grpc.replies") || errors.Is(out.Err, transport.ErrUnavailable) {
				t.Errorf("no replies setting: %v", out.Err)
			}
		}
	}
}

// serveOneReply serves every method as etcd's Watch answers a watch
// created: one reply, then the stream held open until end says how the
// server ends it.
func serveOneReply(t *testing.T, end func(ctx context.Context) error) string {
	t.Helper()
	g := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var in frame
		if err := st.RecvMsg(&in); err != nil {
			return err
		}
		if err := st.SendMsg(&frame{}); err != nil {
			return err
		}
		return end(st.Context())
	}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// A stream that ends short of server.grpc.replies fails as a deadline
// exceeded, counted as such whoever tells it: the client's deadline, or
// the server's own, which etcd answers "Unknown: context deadline
// exceeded" (its handler returns its context's error). With replies set
// the message says how many of them came, not that replies is needed.
func TestStreamShortOfReplies(t *testing.T) {
	protos := filepath.Join("testdata", "protos")
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	for _, tc := range []struct {
		name string
		end  func(ctx context.Context) error
		want string
	}{
		{"held open", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
			"the server sent 1 of the 2 replies server.grpc.replies waits for, and did not end the stream, within the deadline (300ms)"},
		{"the server's deadline", func(context.Context) error { return status.Error(codes.Unknown, "context deadline exceeded") },
			"the server sent 1 of the 2 replies server.grpc.replies waits for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serveOneReply(t, tc.end)
			dir := t.TempDir()
			opts := map[string]any{"method": "places.v1.Places/Within", "replies": 2, "deadline": "300ms",
				"proto_files":  []any{abs(filepath.Join(protos, "service/places/v1/places.proto"))},
				"import_paths": []any{abs(filepath.Join(protos, "vendor")), abs(filepath.Join(protos, "service"))}}
			p := testPlan(dir, plan.Server{URL: addr}, opts, jsonModel(t, dir, "within", `{"data": [{"message": {"limit": 3}}]}`))
			s, err := Kind{}.Open(context.Background(), p, kinds.Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			out := call(t, s, p, "within", 0, false)
			var se *transport.ServerError
			if !errors.As(out.Err, &se) || se.GRPCCode != codes.DeadlineExceeded || !strings.Contains(out.Err.Error(), tc.want) ||
				strings.Contains(out.Err.Error(), "needs server.grpc.replies") {
				t.Errorf("got %v, want DeadlineExceeded saying %q", out.Err, tc.want)
			}
		})
	}
}

// callError counts a Go server's "Unknown: context deadline exceeded" as
// the deadline it is; any other Unknown stays Unknown.
func TestCallErrorServerDeadline(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{status.Error(codes.Unknown, "context deadline exceeded"), codes.DeadlineExceeded},
		{status.Error(codes.Unknown, "boom"), codes.Unknown},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), codes.DeadlineExceeded},
	} {
		var se *transport.ServerError
		if err := callError(context.Background(), "/a.B/C", tc.err); !errors.As(err, &se) || se.GRPCCode != tc.want {
			t.Errorf("%v: got %v, want code %s", tc.err, err, tc.want)
		}
	}
}
