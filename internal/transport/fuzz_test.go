package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/perfscen/perfscen/internal/transport/h2test"
)

// scriptConn is a connection whose server side is a fixed byte stream;
// what the client writes is discarded.
type scriptConn struct{ r io.Reader }

func (c *scriptConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *scriptConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// scriptDial dials one connection that reads script, then refuses.
func scriptDial(script ...[]byte) func(context.Context, string, string) (net.Conn, error) {
	var dialled atomic.Bool
	return func(context.Context, string, string) (net.Conn, error) {
		if dialled.Swap(true) {
			return nil, errors.New("one connection in this test")
		}
		rs := make([]io.Reader, len(script))
		for i, b := range script {
			rs[i] = bytes.NewReader(b)
		}
		return &scriptConn{r: io.MultiReader(rs...)}, nil
	}
}

// knownError holds for the three error kinds a call may end in.
func knownError(err error) bool {
	var se *ServerError
	var pe *ProtocolError
	return errors.As(err, &se) || errors.As(err, &pe) || errors.Is(err, ErrUnavailable)
}

// FuzzHTTPConnReply feeds arbitrary bytes to the HTTP/1.1 reply parser: a
// reply or one of the known errors, never a panic or a hang.
func FuzzHTTPConnReply(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nConnection: keep-alive, close\r\n\r\n",
		"HTTP/1.1 500 Oops\r\nContent-Encoding: gzip\r\n\r\n\x1f\x8b",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewHTTPConn(HTTPConnConfig{Addr: "fuzz:1", Dial: scriptDial(data), MaxReply: 1 << 20})
		defer c.Close()
		r, err := c.Do(context.Background(), &HTTPRequest{Op: "fuzz", Method: "GET", Path: "/"}, 0)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("error of no known kind: %v (%T)", err, err)
			}
			return
		}
		if r.Status < 200 || r.Status > 999 || int64(len(r.Body)) > 1<<20 {
			t.Fatalf("accepted status %d with %d bytes", r.Status, len(r.Body))
		}
	})
}

// FuzzGRPCConnInvoke feeds arbitrary server bytes to the connection's
// frame and reply parser: a reply message or one of the known errors,
// never a panic or a hang.
func FuzzGRPCConnInvoke(f *testing.F) {
	msg := h2test.Message([]byte("reply"))
	f.Add(h2test.Bytes(func(r *h2test.Reply) { r.OK(msg) }))
	f.Add(h2test.Bytes(func(r *h2test.Reply) {
		r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
			{Name: "grpc-status", Value: "3"}, {Name: "grpc-message", Value: "bad %41"}})
	}))
	f.Add(h2test.Bytes(func(r *h2test.Reply) { r.RST(http2.ErrCodeRefusedStream) }))
	f.Add(h2test.Bytes(func(r *h2test.Reply) { r.GoAway(0) }))
	f.Add(h2test.Bytes(func(r *h2test.Reply) {
		r.Framer.WritePing(false, [8]byte{1})
		r.Framer.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
		r.Framer.WriteWindowUpdate(1, 100)
		r.Headers(false, h2test.OKHeaders)
		r.Framer.WriteDataPadded(1, false, msg[:3], []byte{0, 0})
		r.Data(false, msg[3:])
		r.Headers(true, h2test.OKTrailer)
	}))
	f.Add([]byte{})
	var settings bytes.Buffer
	http2.NewFramer(&settings, nil).WriteSettings()
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewGRPCConn(GRPCConnConfig{Target: "fuzz:1", Dial: scriptDial(settings.Bytes(), data), MaxMsg: 1 << 20})
		defer c.Close()
		r, err := c.Invoke(context.Background(), &GRPCCall{Op: "fuzz", Method: "/s/M", Msg: [][]byte{[]byte("req")}}, 0)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("error of no known kind: %v (%T)", err, err)
			}
			return
		}
		if int64(len(r.Msg)) > 1<<20 {
			t.Fatalf("accepted a %d-byte message over the limit", len(r.Msg))
		}
	})
}
