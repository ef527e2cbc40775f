package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/perfscen/perfscen/internal/transport"
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

// serverBytes writes what a server sends after its SETTINGS, for stream 1.
func serverBytes(script func(r *h2Reply)) []byte {
	var out, hbuf bytes.Buffer
	r := &h2Reply{Conn: 1, Req: 1, Stream: 1, fr: http2.NewFramer(&out, nil), enc: hpack.NewEncoder(&hbuf), hbuf: &hbuf}
	script(r)
	return out.Bytes()
}

// FuzzGRPCConnReply feeds arbitrary server bytes to the connection's frame
// and reply parser: it must end in a response that passed validation or in
// one of the client's three error kinds, never panic or hang.
func FuzzGRPCConnReply(f *testing.F) {
	msg := simpleReplyMsg(f)
	f.Add(serverBytes(func(r *h2Reply) { r.OK(msg) }))
	f.Add(serverBytes(func(r *h2Reply) {
		r.Headers(true, []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
			{Name: "grpc-status", Value: "3"}, {Name: "grpc-message", Value: "bad %41"}})
	}))
	f.Add(serverBytes(func(r *h2Reply) { r.RST(http2.ErrCodeRefusedStream) }))
	f.Add(serverBytes(func(r *h2Reply) { r.GoAway(0) }))
	f.Add(serverBytes(func(r *h2Reply) {
		r.fr.WritePing(false, [8]byte{1})
		r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
		r.fr.WriteWindowUpdate(0, 100)
		r.Headers(false, grpcOKHeaders)
		r.Data(false, msg[:7])
		r.Data(false, msg[7:])
		r.Headers(true, grpcOKTrailer)
	}))
	f.Add(serverBytes(func(r *h2Reply) {
		r.Headers(false, []hpack.HeaderField{{Name: ":status", Value: "502"}})
		r.Data(true, []byte("<html>"))
	}))
	f.Add([]byte{})
	var settings bytes.Buffer
	http2.NewFramer(&settings, nil).WriteSettings()
	req := simpleRequest("")
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &grpcClient{opts: Options{Protocol: "grpc"}, target: "fuzz:1", scheme: "http", mdOK: true}
		gc := &grpcConn{c: c, dialConn: func(context.Context, time.Time) (net.Conn, error) {
			return nil, errors.New("one connection in this test")
		}}
		in := io.MultiReader(bytes.NewReader(settings.Bytes()), bytes.NewReader(data))
		if err := gc.start(&scriptConn{r: in}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		resp, err := gc.Infer(context.Background(), req, 0)
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
