package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"

	"github.com/perfscen/perfscen/internal/transport/h2test"
)

func newGRPCConn(t *testing.T, cfg GRPCConnConfig) *GRPCConn {
	t.Helper()
	c := NewGRPCConn(cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

// Any method path: the request message, given in pieces, arrives whole
// with its prefix, the metadata and timeout go along, and the reply
// message comes back; one connection carries every call.
func TestGRPCConnCall(t *testing.T) {
	type seen struct{ body string }
	got := make(chan seen, 8)
	fake := h2test.New(t, func(r *h2test.Reply) {
		got <- seen{body: string(r.Body)}
		r.OK(h2test.Message(append([]byte("re:"), r.Body[5:]...)))
	})
	md, ok := GRPCMetadata(map[string]string{"X-Key": "v", "bin-bin": "\x00\x01"})
	if !ok {
		t.Fatal("valid metadata refused")
	}
	c := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr(), Metadata: md})
	big := strings.Repeat("x", 300<<10) // beyond the server's 64 KiB window
	for i, msg := range [][][]byte{{[]byte("ab"), nil, []byte("cd")}, {[]byte(big)}, {}} {
		r, err := c.Invoke(context.Background(), &GRPCCall{Op: "call", Method: "/any.Service/Method", Msg: msg}, time.Minute)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		var whole []byte
		for _, b := range msg {
			whole = append(whole, b...)
		}
		if s := <-got; s.body != string(h2test.Message(whole)) {
			t.Fatalf("call %d: the server got %d bytes, want the %d-byte message prefixed", i, len(s.body), len(whole))
		}
		if string(r.Msg) != "re:"+string(whole) {
			t.Fatalf("call %d: reply %.40q", i, r.Msg)
		}
	}
	if n := fake.Conns(); n != 1 {
		t.Errorf("three calls took %d connections", n)
	}
}

// Statuses map to errors as grpc-go's do: server statuses are
// *ServerError with the message percent-decoded, UNAVAILABLE a transport
// failure, a reply that is not gRPC a status from its HTTP status.
func TestGRPCConnStatuses(t *testing.T) {
	for name, tc := range map[string]struct {
		reply     func(r *h2test.Reply)
		code      codes.Code
		msg       string
		transport bool
	}{
		"trailers only": {func(r *h2test.Reply) {
			r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
				{Name: "grpc-status", Value: "3"}, {Name: "grpc-message", Value: "bad %E2%9C%93"}})
		}, codes.InvalidArgument, "bad ✓", false},
		"unavailable": {func(r *h2test.Reply) {
			r.Headers(false, h2test.OKHeaders)
			r.Headers(true, []hpack.HeaderField{{Name: "grpc-status", Value: "14"}, {Name: "grpc-message", Value: "down"}})
		}, codes.Unavailable, "down", true},
		"http 404": {func(r *h2test.Reply) {
			r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "404"}})
		}, codes.Unimplemented, "unexpected HTTP status code received from server: 404", false},
	} {
		t.Run(name, func(t *testing.T) {
			fake := h2test.New(t, tc.reply)
			c := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr()})
			_, err := c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M", Msg: [][]byte{[]byte("x")}}, time.Minute)
			if tc.transport {
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("got %v, want a transport error", err)
				}
				return
			}
			var se *ServerError
			if !errors.As(err, &se) || se.GRPCCode != tc.code || !strings.HasPrefix(se.Message, tc.msg) || se.Op != "op" {
				t.Fatalf("got %v, want %v %q", err, tc.code, tc.msg)
			}
		})
	}
}

// The message size limit holds both ways.
func TestGRPCConnMessageLimits(t *testing.T) {
	fake := h2test.New(t, func(r *h2test.Reply) { r.OK(h2test.Message(make([]byte, 400))) })
	c := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr(), MaxMsg: 100})
	_, err := c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M", Msg: [][]byte{make([]byte, 60), make([]byte, 60)}}, time.Minute)
	var se *ServerError
	if !errors.As(err, &se) || se.GRPCCode != codes.ResourceExhausted || !strings.Contains(se.Message, "trying to send message larger than max") {
		t.Fatalf("large request: %v", err)
	}
	if fake.Reqs() != 0 {
		t.Error("a request over the limit was sent")
	}
	_, err = c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M", Msg: [][]byte{make([]byte, 60)}}, time.Minute)
	if !errors.As(err, &se) || se.GRPCCode != codes.ResourceExhausted || !strings.Contains(se.Message, "received message larger than max") {
		t.Fatalf("large reply: %v", err)
	}
}

// A reply that does not come within the timeout is a transport timeout;
// the server was told the deadline in grpc-timeout.
func TestGRPCConnDeadline(t *testing.T) {
	release := make(chan struct{})
	fake := h2test.New(t, func(r *h2test.Reply) { <-release })
	t.Cleanup(func() { close(release) })
	c := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr()})
	_, err := c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M"}, 20*time.Millisecond)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "20ms") {
		t.Fatalf("got %v, want a transport timeout naming 20ms", err)
	}
}

// A timeout that has passed before the call's headers are written (on a
// busy machine, a dial or a wait for the CPU can take all of it) is the
// same transport timeout, naming the limit, as one that passes later: at
// load 13 the deadline test got a bare "context deadline exceeded".
func TestGRPCConnDeadlineBeforeTheCall(t *testing.T) {
	fake := h2test.New(t, func(r *h2test.Reply) { r.OK(h2test.Message([]byte("ok"))) })
	c := newGRPCConn(t, GRPCConnConfig{Target: fake.Addr()})
	if _, err := c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M", Msg: [][]byte{[]byte("x")}}, time.Minute); err != nil {
		t.Fatal(err) // the connection is up: the next call does not dial
	}
	_, err := c.Invoke(context.Background(), &GRPCCall{Op: "op", Method: "/s/M", Msg: [][]byte{[]byte("x")}}, time.Nanosecond)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1ns") {
		t.Fatalf("got %v, want a transport timeout naming 1ns", err)
	}
}
