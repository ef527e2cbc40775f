package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/runner/plan"
)

var protocols = []string{"http", "grpc"}

// transportKind is a protocol and the kind of connection its infer calls
// take: the library transports (net/http, grpc-go), or perfscen's own
// connections, the path the runner's workers take.
type transportKind struct {
	proto string
	own   bool
}

func (k transportKind) String() string {
	if k.own {
		return k.proto + "-own"
	}
	return k.proto + "-library"
}

// transports is every protocol over both kinds of connection: the tests
// of infer calls run over all of them.
var transports = []transportKind{{"http", false}, {"http", true}, {"grpc", false}, {"grpc", true}}

type inferFunc func(context.Context, *client.InferRequest) (*client.InferResponse, error)

// connect returns a client for k's protocol (for the calls other than
// infer) and the infer of k's kind of connection.
func connect(t *testing.T, s *refserver.Server, k transportKind, mod ...func(*client.Options)) (client.Client, inferFunc) {
	t.Helper()
	c := newClient(t, s, k.proto, mod...)
	if !k.own {
		return c, c.Infer
	}
	conn := c.(client.ConnClient).NewConn()
	if conn == nil {
		t.Fatalf("%s: no connection of the caller's own", k)
	}
	t.Cleanup(func() { conn.Close() })
	return c, func(ctx context.Context, req *client.InferRequest) (*client.InferResponse, error) {
		return conn.Infer(ctx, req, 0)
	}
}

// start runs a reference server on loopback ports picked by the OS.
func start(t *testing.T, opts refserver.Options) *refserver.Server {
	t.Helper()
	opts.HTTPAddr, opts.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	opts.ShutdownGrace = 2 * time.Second
	s, err := refserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// client connects perfscen's client for proto to s. Tests name protocols
// as strings (they are subtest names); this is where they become one.
func newClient(t *testing.T, s *refserver.Server, proto string, mod ...func(*client.Options)) client.Client {
	t.Helper()
	p, err := plan.ParseProtocol(proto)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.HTTPAddr()
	if p == plan.ProtocolGRPC {
		addr = s.GRPCAddr()
	}
	opts := client.Options{Protocol: p, URL: addr, Timeout: 10 * time.Second}
	for _, m := range mod {
		m(&opts)
	}
	c, err := client.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ownConn returns the Infer of a connection of the caller's own, the path
// the runner's workers take.
func ownConn(t *testing.T, s *refserver.Server, proto string, mod ...func(*client.Options)) inferFunc {
	t.Helper()
	_, infer := connect(t, s, transportKind{proto, true}, mod...)
	return infer
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func i32(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func seq(n int, f func(i int) int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends a raw HTTP request, bypassing perfscen's client.
func post(t *testing.T, s *refserver.Server, path string, header map[string]string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, "http://"+s.HTTPAddr()+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, b}
}
