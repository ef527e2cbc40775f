package client

import (
	"context"
	"errors"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the reply compression test needs it registered
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// countingListener counts the connections a server accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// grpcServer serves srv with grpc-go on a loopback port.
func grpcServer(t testing.TB, srv pb.GRPCInferenceServiceServer, opts ...grpc.ServerOption) (string, *countingListener) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: lis}
	opts = append(opts, grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32))
	s := grpc.NewServer(opts...)
	pb.RegisterGRPCInferenceServiceServer(s, srv)
	go s.Serve(cl)
	t.Cleanup(s.Stop)
	return lis.Addr().String(), cl
}

// mdRecorder wraps the fake server and keeps the last call's metadata and
// whether it had a deadline.
type mdRecorder struct {
	*fakeGRPC
	mu       sync.Mutex
	md       metadata.MD
	deadline bool
	calls    int
}

func (m *mdRecorder) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	_, dl := ctx.Deadline()
	m.mu.Lock()
	m.md, m.deadline = md, dl
	m.calls++
	m.mu.Unlock()
	return m.fakeGRPC.infer(ctx, r)
}

// One connection carries every call, replies are the shared client's, and
// the server sees the same metadata and deadline from both paths.
func TestGRPCConnSendsWhatClientSends(t *testing.T) {
	rec := &mdRecorder{fakeGRPC: &fakeGRPC{regions: map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus{}}}
	addr, lis := grpcServer(t, rec)
	opts := Options{Protocol: "grpc", URL: addr, Timeout: 10 * time.Second,
		Headers: map[string]string{"Authorization": secret, "X-Trace-Bin": "\x00\x01binary"}}
	c := newClient(t, opts)
	ctx := context.Background()
	want, err := c.Infer(ctx, simpleRequest("same"))
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	wantMD, wantDL := rec.md, rec.deadline
	rec.mu.Unlock()

	conn := c.(ConnClient).NewConn()
	if conn == nil {
		t.Fatal("NewConn returned nil")
	}
	t.Cleanup(func() { conn.Close() })
	before := lis.n.Load()
	for i := range 5 {
		got, err := conn.Infer(ctx, simpleRequest("same"), time.Minute)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got.ID != want.ID || got.Model != want.Model || got.Version != want.Version || !sameOutputs(got.Outputs, want.Outputs) {
			t.Fatalf("call %d: reply %+v, shared client's %+v", i, got, want)
		}
		if got.Timing.SendRecv <= 0 || got.Timing.Wait < 0 {
			t.Errorf("timing %+v", got.Timing)
		}
	}
	if n := lis.n.Load() - before; n != 1 {
		t.Errorf("5 calls took %d new connections, want 1", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.deadline || !wantDL {
		t.Errorf("deadline sent: own connection %v, shared client %v", rec.deadline, wantDL)
	}
	for _, k := range []string{"authorization", "x-trace-bin", "user-agent", "content-type", ":authority"} {
		if !slices.Equal(rec.md.Get(k), wantMD.Get(k)) {
			t.Errorf("metadata %s: own connection %q, shared client %q", k, rec.md.Get(k), wantMD.Get(k))
		}
	}
	if len(rec.md) != len(wantMD) {
		t.Errorf("metadata: own connection %v, shared client %v", rec.md, wantMD)
	}
}

func sameOutputs(a, b []tensor.Tensor) bool {
	return slices.EqualFunc(a, b, func(x, y tensor.Tensor) bool {
		return x.Name == y.Name && x.DataType == y.DataType && slices.Equal(x.Shape, y.Shape) && string(x.Raw) == string(y.Raw)
	})
}

// A reply larger than the 16 MiB window the client offers needs its
// WINDOW_UPDATEs, and a request larger than grpc-go's 64 KiB initial
// window must wait for the server's: both directions cross their windows.
func TestGRPCConnLargerThanWindows(t *testing.T) {
	addr, _ := grpcServer(t, &fakeGRPC{})
	conn := newConn(t, Options{Protocol: "grpc", URL: addr})
	const n = 5 << 19 // 10 MiB per INT32 tensor: a 20 MiB reply
	if 2*4*n <= transport.GRPCWindow {
		t.Fatal("the reply must be larger than the window")
	}
	a, b := make([]int32, n), make([]int32, n)
	for i := range a {
		a[i], b[i] = int32(i), 2
	}
	req := &InferRequest{Model: "simple", Inputs: []Input{
		{Tensor: tensor.Tensor{Name: "INPUT0", DataType: tensor.INT32, Shape: []int64{1, n}, Raw: tensor.EncodeInt32s(a)}},
		{Tensor: tensor.Tensor{Name: "INPUT1", DataType: tensor.INT32, Shape: []int64{1, n}, Raw: tensor.EncodeInt32s(b)}},
	}}
	for i := range 2 { // the connection's windows must be whole again after the first
		resp, err := conn.Infer(context.Background(), req, time.Minute)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		out, _ := resp.Output("OUTPUT1")
		got, _ := tensor.DecodeInt32s(out.Raw)
		if len(got) != n || got[0] != -2 || got[n-1] != n-3 {
			t.Fatalf("call %d: OUTPUT1 has %d elements", i, len(got))
		}
	}
}

// The server's error statuses come back as the shared client's do: the
// code, and the message percent-decoded, from trailers-only replies and
// from trailers after headers.
func TestGRPCConnErrorStatus(t *testing.T) {
	addr, _ := grpcServer(t, &fakeGRPC{})
	vs := []Options{{Protocol: "grpc", URL: addr}}
	c := newClient(t, vs[0])
	conn := newConn(t, vs[0])
	req := simpleRequest("")
	req.Model = "wrong_model_ñame 100%"
	_, shared := c.Infer(context.Background(), req)
	_, own := conn.Infer(context.Background(), req, time.Minute)
	for name, err := range map[string]error{"shared": shared, "own": own} {
		var se *transport.ServerError
		if !errors.As(err, &se) || se.GRPCCode != codes.InvalidArgument || se.Message != "Request for unknown model: 'wrong_model_ñame 100%' is not found" {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The connection stays usable after an error status.
	if _, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute); err != nil {
		t.Fatal(err)
	}

	fake := h2test.New(t, func(r *h2test.Reply) {
		switch r.Req {
		case 1: // trailers after headers, with a status detail grpc-go ignores
			r.Headers(false, h2test.OKHeaders)
			r.Headers(true, []hpack.HeaderField{{Name: "grpc-status", Value: "8"}, {Name: "grpc-message", Value: "queue %E2%9C%93 full"}})
		case 2: // no grpc-status at all
			r.Headers(false, h2test.OKHeaders)
			r.Headers(true, []hpack.HeaderField{{Name: "x-other", Value: "1"}})
		}
	})
	conn = newConn(t, Options{Protocol: "grpc", URL: fake.Addr()})
	for _, want := range []struct {
		code codes.Code
		msg  string
	}{{codes.ResourceExhausted, "queue ✓ full"}, {codes.Unknown, ""}} {
		_, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
		var se *transport.ServerError
		if !errors.As(err, &se) || se.GRPCCode != want.code || se.Message != want.msg {
			t.Errorf("got %v, want %v %q", err, want.code, want.msg)
		}
	}
}

// blockingGRPC answers ModelInfer only when its context ends.
type blockingGRPC struct {
	*fakeGRPC
	block atomic.Bool
}

func (b *blockingGRPC) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if b.block.Load() {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return b.infer(ctx, r)
}

// A call past its deadline is a transport timeout (the deadline travels as
// grpc-timeout, so the server may give up first), cancelling the context
// interrupts a call, and the next call works on a new connection.
func TestGRPCConnDeadlineAndCancel(t *testing.T) {
	srv := &blockingGRPC{fakeGRPC: &fakeGRPC{}}
	srv.block.Store(true)
	addr, lis := grpcServer(t, srv)
	conn := newConn(t, Options{Protocol: "grpc", URL: addr})

	_, err := conn.Infer(context.Background(), simpleRequest("t"), 30*time.Millisecond)
	if !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: got %v, want a transport error wrapping context.DeadlineExceeded", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := conn.Infer(ctx, simpleRequest("c"), 0)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, transport.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v, want a transport error wrapping context.Canceled", err)
	}

	srv.block.Store(false)
	before := lis.n.Load()
	if _, err := conn.Infer(context.Background(), simpleRequest("after"), time.Minute); err != nil {
		t.Fatalf("after a timeout: %v", err)
	}
	if lis.n.Load() == before {
		t.Error("the call after a timeout reused the abandoned connection")
	}
}

// handoffListener hands the connections of one real listener to whichever
// server currently listens, so one server can drain (GOAWAY) while another
// takes the new connections on the same address.
type handoffListener struct {
	net.Listener
	mu  sync.Mutex
	cur *childListener
}

type childListener struct {
	parent *handoffListener
	conns  chan net.Conn
	done   chan struct{}
	once   sync.Once
}

func (c *childListener) Accept() (net.Conn, error) {
	select {
	case nc := <-c.conns:
		return nc, nil
	case <-c.done:
		return nil, net.ErrClosed
	}
}

func (c *childListener) Close() error   { c.once.Do(func() { close(c.done) }); return nil }
func (c *childListener) Addr() net.Addr { return c.parent.Addr() }

func (h *handoffListener) child() *childListener {
	c := &childListener{parent: h, conns: make(chan net.Conn), done: make(chan struct{})}
	h.mu.Lock()
	h.cur = c
	h.mu.Unlock()
	return c
}

func (h *handoffListener) run() {
	for {
		nc, err := h.Listener.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		c := h.cur
		h.mu.Unlock()
		select {
		case c.conns <- nc:
		case <-c.done:
			nc.Close()
		}
	}
}

// countingGRPC counts the calls it answered.
type countingGRPC struct {
	*fakeGRPC
	n atomic.Int64
}

func (c *countingGRPC) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	c.n.Add(1)
	return c.infer(ctx, r)
}

// A grpc-go server that drains mid-run (GOAWAY, then a second GOAWAY naming
// the last stream it took) costs nothing but a new connection: every call
// succeeds, and every call reaches a server exactly once.
func TestGRPCConnGoAwayMidRun(t *testing.T) {
	base, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &handoffListener{Listener: base}
	t.Cleanup(func() { base.Close() })
	go h.run()
	first, second := &countingGRPC{fakeGRPC: &fakeGRPC{}}, &countingGRPC{fakeGRPC: &fakeGRPC{}}
	s1, s2 := grpc.NewServer(), grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(s1, first)
	pb.RegisterGRPCInferenceServiceServer(s2, second)
	go s1.Serve(h.child())
	t.Cleanup(s1.Stop)

	conn := newConn(t, Options{Protocol: "grpc", URL: base.Addr().String()})
	call := func(i int) {
		t.Helper()
		if _, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	calls := 0
	for ; calls < 5; calls++ {
		call(calls)
	}
	// The first server drains; GracefulStop returns once the client has
	// let go of its connection. Calls go on until the second server has
	// answered some (the GOAWAY arrives when the server's goroutines get
	// to it), each of them answered once.
	stopped := make(chan struct{})
	go func() { s1.GracefulStop(); close(stopped) }()
	go s2.Serve(h.child())
	t.Cleanup(s2.Stop)
	for second.n.Load() < 3 {
		if calls > 100000 {
			t.Fatal("the client never moved to the second server")
		}
		call(calls)
		calls++
	}
	<-stopped
	if a, b := first.n.Load(), second.n.Load(); a+b != int64(calls) {
		t.Errorf("servers answered %d and %d calls, want %d in all", a, b, calls)
	}
}

// A stream the server did not take (beyond a GOAWAY's last stream, or
// refused) goes again, once, on a new connection; a stream the server took
// and then dropped with the connection is a failure, never resent.
func TestGRPCConnRefusedStreams(t *testing.T) {
	msg := simpleReplyMsg(t)
	fake := h2test.New(t, func(r *h2test.Reply) {
		switch {
		case r.Conn == 1 && r.Req == 2:
			r.GoAway(r.Stream - 2) // the second request was not taken
			r.Close()
		case r.Conn == 2 && r.Req == 1:
			r.RST(http2.ErrCodeRefusedStream)
		case r.Conn == 3 && r.Req == 2:
			r.GoAway(r.Stream) // taken, then the connection went away
			r.Close()
		default:
			r.OK(msg)
		}
	})
	conn := newConn(t, Options{Protocol: "grpc", URL: fake.Addr()})
	call := func() error {
		_, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
		return err
	}
	if err := call(); err != nil { // conn 1, request 1
		t.Fatal(err)
	}
	if err := call(); err != nil { // conn 1 refuses, conn 2 refuses: failed twice
		if !errors.As(err, new(*transport.ServerError)) && !errors.Is(err, transport.ErrUnavailable) {
			t.Fatalf("refused twice: %v", err)
		}
	} else {
		t.Fatal("a call refused on two connections succeeded")
	}
	if err := call(); err != nil { // conn 3, request 1
		t.Fatal(err)
	}
	if err := call(); !errors.Is(err, transport.ErrUnavailable) { // conn 3, request 2: taken, never answered
		t.Fatalf("a taken stream whose connection closed: %v, want a transport error", err)
	}
	if got := fake.Reqs(); got != 5 {
		t.Errorf("the server saw %d requests, want 5", got)
	}
}

// Replies that are not a unary gRPC reply are errors of the kind grpc-go
// gives them, never hangs or panics.
func TestGRPCConnMalformedReplies(t *testing.T) {
	msg := simpleReplyMsg(t)
	tests := []struct {
		name  string
		reply func(r *h2test.Reply)
		code  codes.Code // 0: a transport error
		want  string
	}{
		{"http 503", func(r *h2test.Reply) {
			r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "503"}, {Name: "content-type", Value: "text/plain"}})
		}, 0, "unexpected HTTP status code received from server: 503 (Service Unavailable); transport: received unexpected content-type \"text/plain\""},
		{"http 404", func(r *h2test.Reply) {
			r.Headers(false, []hpack.HeaderField{{Name: ":status", Value: "404"}})
			r.Data(true, []byte("not found"))
		}, codes.Unimplemented, "unexpected HTTP status code received from server: 404 (Not Found)"},
		{"no content type", func(r *h2test.Reply) {
			r.Headers(false, []hpack.HeaderField{{Name: ":status", Value: "200"}})
			r.Data(true, []byte("hello"))
		}, codes.Unknown, "missing HTTP content-type"},
		{"two messages", func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Data(false, append(append([]byte{}, msg...), msg...))
			r.Headers(true, h2test.OKTrailer)
		}, codes.Internal, "cardinality violation"},
		{"no message", func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Headers(true, h2test.OKTrailer)
		}, codes.Internal, "received no response message"},
		{"no trailers", func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Data(true, msg)
		}, codes.Internal, "without sending trailers"},
		{"truncated message", func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Data(false, msg[:len(msg)-3])
			r.Headers(true, h2test.OKTrailer)
		}, codes.Internal, "truncated"},
		{"not protobuf", func(r *h2test.Reply) {
			r.OK([]byte{0, 0, 0, 0, 3, 0xff, 0xff, 0xff})
		}, codes.Internal, "failed to unmarshal"},
		{"compressed, no encoding", func(r *h2test.Reply) {
			m := append([]byte{}, msg...)
			m[0] = 1
			r.OK(m)
		}, codes.Internal, "compressed flag set"},
		{"rst cancel", func(r *h2test.Reply) { r.RST(http2.ErrCodeCancel) }, codes.Canceled, "RST_STREAM with error code: CANCEL"},
		{"closed", func(r *h2test.Reply) { r.Close() }, 0, "EOF"},
		{"headers mid-stream", func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Headers(false, h2test.OKHeaders)
		}, codes.Internal, "cannot appear in the middle"},
		{"data before headers", func(r *h2test.Reply) { r.Data(true, msg) }, codes.Internal, "DATA frame before response headers"},
		{"request pseudo-header", func(r *h2test.Reply) {
			r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: ":path", Value: "/"}, {Name: "content-type", Value: "application/grpc"}, {Name: "grpc-status", Value: "0"}})
		}, codes.Internal, "invalid pseudo-header"},
		{"pseudo-header after a field", func(r *h2test.Reply) {
			r.Headers(true, []hpack.HeaderField{{Name: "content-type", Value: "application/grpc"}, {Name: ":status", Value: "200"}, {Name: "grpc-status", Value: "0"}})
		}, codes.Internal, "invalid pseudo-header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := h2test.New(t, tc.reply)
			conn := newConn(t, Options{Protocol: "grpc", URL: fake.Addr()})
			_, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
			if err == nil {
				t.Fatal("accepted")
			}
			var se *transport.ServerError
			if tc.code == 0 {
				if !errors.Is(err, transport.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want a transport error containing %q", err, tc.want)
				}
				return
			}
			if !errors.As(err, &se) || se.GRPCCode != tc.code || !strings.Contains(se.Message, tc.want) {
				t.Fatalf("got %v, want %v containing %q", err, tc.code, tc.want)
			}
		})
	}
}

// Header blocks split over CONTINUATION frames decode as one, and
// blocks of no interest to the call (another stream's) still update the
// connection's HPACK table, so the next reply decodes.
func TestGRPCConnContinuationAndTable(t *testing.T) {
	msg := simpleReplyMsg(t)
	extra := []hpack.HeaderField{{Name: "x-long", Value: strings.Repeat("v", 300)}}
	fake := h2test.New(t, func(r *h2test.Reply) {
		r.SplitHeaders(false, 7, append(append([]hpack.HeaderField{}, h2test.OKHeaders...), extra...))
		r.Data(false, msg)
		// A stream the client has not opened: its block enters the table.
		other := *r
		other.Stream = r.Stream + 100
		other.Headers(false, []hpack.HeaderField{{Name: "x-table", Value: "entry"}})
		r.SplitHeaders(true, 3, append(append([]hpack.HeaderField{}, h2test.OKTrailer...), hpack.HeaderField{Name: "x-table", Value: "entry"}))
	})
	conn := newConn(t, Options{Protocol: "grpc", URL: fake.Addr()})
	for i := range 3 {
		resp, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		checkSimpleOutput(t, resp, "OUTPUT0", 1)
	}
}

// A server may answer before it has read the whole request (here: a
// request larger than its window, which it never opens). The call ends
// with the server's status, and the next call takes a new connection,
// since this side of the stream was left open.
func TestGRPCConnReplyBeforeRequestEnds(t *testing.T) {
	fake := h2test.New(t, nil)
	fake.OnHeaders = func(r *h2test.Reply) {
		r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
			{Name: "grpc-status", Value: "8"}, {Name: "grpc-message", Value: "too large"}})
	}
	conn := newConn(t, Options{Protocol: "grpc", URL: fake.Addr()})
	req := simpleRequest("")
	req.Inputs[0].Raw = make([]byte, 4*(1<<16)) // 256 KiB: beyond the 64 KiB window
	req.Inputs[0].Shape = []int64{1, 1 << 16}
	for i := range 2 {
		_, err := conn.Infer(context.Background(), req, time.Minute)
		var se *transport.ServerError
		if !errors.As(err, &se) || se.GRPCCode != codes.ResourceExhausted || se.Message != "too large" {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := fake.Conns(); n != 2 {
		t.Errorf("two calls took %d connections, want 2", n)
	}
}

// gzipGRPC compresses its replies, as a server may when the client lists
// gzip in grpc-accept-encoding.
type gzipGRPC struct{ *fakeGRPC }

func (g gzipGRPC) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if err := grpc.SetSendCompressor(ctx, "gzip"); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "client does not accept gzip: %v", err)
	}
	return g.infer(ctx, r)
}

func TestGRPCConnCompressedReply(t *testing.T) {
	addr, _ := grpcServer(t, gzipGRPC{&fakeGRPC{}})
	conn := newConn(t, Options{Protocol: "grpc", URL: addr})
	resp, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	checkSimpleOutput(t, resp, "OUTPUT0", 1)
}

// Not every server is HTTP/2: an HTTP/1.1 server answering the preface is
// a transport error that says so.
func TestGRPCConnNotHTTP2(t *testing.T) {
	addr := serveLoopback(t, func(c net.Conn) {
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		c.Close()
	})
	conn := newConn(t, Options{Protocol: "grpc", URL: addr})
	_, err := conn.Infer(context.Background(), simpleRequest(""), time.Minute)
	if !errors.Is(err, transport.ErrUnavailable) {
		t.Fatalf("got %v, want a transport error", err)
	}
}

// Options the grpc-go connections must keep keep the shared path.
func TestGRPCConnNotOffered(t *testing.T) {
	for name, opts := range map[string]Options{
		"max connections": {Protocol: "grpc", URL: "127.0.0.1:1", MaxConnections: 2},
		"bad metadata":    {Protocol: "grpc", URL: "127.0.0.1:1", Headers: map[string]string{"X-A": "a\nb"}},
		"bad key":         {Protocol: "grpc", URL: "127.0.0.1:1", Headers: map[string]string{"X A": "a"}},
	} {
		if conn := newClient(t, opts).(ConnClient).NewConn(); conn != nil {
			t.Errorf("%s: NewConn offered a connection", name)
		}
	}
}
