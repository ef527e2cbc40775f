package grpc

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/runner/plan"
)

// serveSilent serves places.v1.Places/Visit as etcd serves Watch: a
// call's messages are answered when the client ends its side, but a call
// that sent none is never answered, the stream left open until the
// client goes. The server's other methods are answered UNIMPLEMENTED.
func serveSilent(t *testing.T) string {
	t.Helper()
	visit := func(_ any, st grpc.ServerStream) error {
		n := 0
		for {
			var in frame
			err := st.RecvMsg(&in)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			<-st.Context().Done()
			return st.Context().Err()
		}
		return st.SendMsg(&frame{b: []byte{8, byte(n)}}) // Trip{stops: n}
	}
	g := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}))
	g.RegisterService(&grpc.ServiceDesc{
		ServiceName: "places.v1.Places",
		HandlerType: (*any)(nil),
		Streams:     []grpc.StreamDesc{{StreamName: "Visit", Handler: visit, ClientStreams: true}},
	}, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// A client-streaming method that never answers a call without messages
// is served, and the server ready: its start-up check must not wait for
// an answer that never comes (with a connect timeout of 3 s, each 2 s
// readiness attempt ran out, and a healthy server was "not ready").
func TestSilentStreamingMethodIsReady(t *testing.T) {
	addr := serveSilent(t)
	protos, err := filepath.Abs(protoDir)
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]any{
		"method":       "places.v1.Places/Visit",
		"proto_files":  []any{filepath.Join(protos, "service/places/v1/places.proto")},
		"import_paths": []any{filepath.Join(protos, "vendor"), filepath.Join(protos, "service")},
	}
	dir := t.TempDir()
	p := testPlan(dir, plan.Server{URL: addr}, opts,
		jsonModel(t, dir, "visit", `{"data": [{"messages": [{"latitude": 1}, {"latitude": 2}], "expected_fields": {"stops": 2}}]}`))
	s, err := Kind{}.Open(context.Background(), p, kinds.Env{ConnectTimeout: 3 * time.Second})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	if out := call(t, s, p, "visit", 0, true); out.Err != nil || out.Mismatch != "" || !out.Checked {
		t.Errorf("call: %+v", out)
	}

	// The same server lacks Nearest: that is still said at once.
	opts["method"] = "places.v1.Places/Nearest"
	p = testPlan(dir, plan.Server{URL: addr}, opts, jsonModel(t, dir, "nearest", `{"data": [{"message": {}}]}`))
	if s, err := (Kind{}).Open(context.Background(), p, kinds.Env{ConnectTimeout: 3 * time.Second}); err == nil {
		s.Close()
		t.Errorf("a method the server lacks was taken for served")
	}
}
