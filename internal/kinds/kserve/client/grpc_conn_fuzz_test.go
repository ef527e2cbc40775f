package client

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

	"github.com/perfscen/perfscen/internal/transport"
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

// FuzzGRPCConnReply feeds arbitrary server bytes to the caller's own
// connection, frames and reply decoding together: it must end in a
// response that passed validation or in one of the client's three error
// kinds, never panic or hang.
func FuzzGRPCConnReply(f *testing.F) {
	msg := simpleReplyMsg(f)
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
		r.Framer.WriteWindowUpdate(0, 100)
		r.Headers(false, h2test.OKHeaders)
		r.Data(false, msg[:7])
		r.Data(false, msg[7:])
		r.Headers(true, h2test.OKTrailer)
	}))
	f.Add(h2test.Bytes(func(r *h2test.Reply) {
		r.Headers(false, []hpack.HeaderField{{Name: ":status", Value: "502"}})
		r.Data(true, []byte("<html>"))
	}))
	f.Add([]byte{})
	var settings bytes.Buffer
	http2.NewFramer(&settings, nil).WriteSettings()
	req := simpleRequest("")
	f.Fuzz(func(t *testing.T, data []byte) {
		var dialled atomic.Bool
		dial := func(context.Context, string, string) (net.Conn, error) {
			if dialled.Swap(true) {
				return nil, errors.New("one connection in this test")
			}
			return &scriptConn{r: io.MultiReader(bytes.NewReader(settings.Bytes()), bytes.NewReader(data))}, nil
		}
		c, err := New(context.Background(), Options{Protocol: "grpc", URL: "fuzz:1", Dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conn := c.(ConnClient).NewConn()
		defer conn.Close()
		resp, err := conn.Infer(context.Background(), req, 0)
		if err == nil {
			for _, o := range resp.Outputs {
				if o.Raw != nil {
					if cerr := o.Check(); cerr != nil {
						t.Fatalf("accepted an invalid output %q: %v", o.Name, cerr)
					}
				}
			}
			return
		}
		var se *transport.ServerError
		var pe *transport.ProtocolError
		if !errors.As(err, &se) && !errors.As(err, &pe) && !errors.Is(err, transport.ErrUnavailable) {
			t.Fatalf("error of no known kind: %v (%T)", err, err)
		}
	})
}
