// Package h2test is an HTTP/2 server for tests written down to the
// frames: each request (HEADERS, then DATA up to END_STREAM) is answered
// by a script that writes whatever frames the test needs, including ones
// no grpc-go server would send. Its steady state allocates nothing, so a
// client's allocations can be counted alone. It serves the tests of
// perfscen's own gRPC connection and of the kinds built on it.
package h2test

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Server is a running fake.
type Server struct {
	lis   net.Listener
	reply func(r *Reply)
	// OnHeaders, when set before the first request, answers at the
	// request's HEADERS instead, and the server never opens its receive
	// windows: a server that rejects a large request before reading it.
	OnHeaders func(r *Reply)
	conns     atomic.Int64 // connections accepted
	reqs      atomic.Int64 // requests whose END_STREAM arrived

	mu   sync.Mutex
	open []net.Conn
}

// Reply is the state a script writes one reply with.
type Reply struct {
	Conn, Req int // connection number and request number on it, from 1
	Stream    uint32
	Body      []byte // the request's DATA, as received
	// Framer writes raw frames to the client.
	Framer *http2.Framer
	enc    *hpack.Encoder
	hbuf   *bytes.Buffer
	closed bool
}

// Headers writes fields as one HEADERS frame.
func (r *Reply) Headers(end bool, fields []hpack.HeaderField) {
	r.hbuf.Reset()
	for _, f := range fields {
		r.enc.WriteField(f)
	}
	r.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: r.Stream, BlockFragment: r.hbuf.Bytes(), EndHeaders: true, EndStream: end})
}

// SplitHeaders writes fields as a HEADERS frame and CONTINUATIONs of at
// most n bytes of header block each.
func (r *Reply) SplitHeaders(end bool, n int, fields []hpack.HeaderField) {
	r.hbuf.Reset()
	for _, f := range fields {
		r.enc.WriteField(f)
	}
	block := r.hbuf.Bytes()
	first := block[:min(n, len(block))]
	block = block[len(first):]
	r.Framer.WriteHeaders(http2.HeadersFrameParam{StreamID: r.Stream, BlockFragment: first, EndHeaders: len(block) == 0, EndStream: end})
	for len(block) > 0 {
		k := min(n, len(block))
		r.Framer.WriteContinuation(r.Stream, k == len(block), block[:k])
		block = block[k:]
	}
}

// Data writes b in DATA frames of at most 16 KiB.
func (r *Reply) Data(end bool, b []byte) {
	for len(b) > 16384 {
		r.Framer.WriteData(r.Stream, false, b[:16384])
		b = b[16384:]
	}
	r.Framer.WriteData(r.Stream, end, b)
}

// RST resets the stream.
func (r *Reply) RST(code http2.ErrCode) { r.Framer.WriteRSTStream(r.Stream, code) }

// GoAway sends GOAWAY naming last as the last stream processed.
func (r *Reply) GoAway(last uint32) { r.Framer.WriteGoAway(last, http2.ErrCodeNo, nil) }

// Close ends the connection once the script returns.
func (r *Reply) Close() { r.closed = true }

// The headers and trailers of a successful gRPC reply.
var (
	OKHeaders = []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"}}
	OKTrailer = []hpack.HeaderField{{Name: "grpc-status", Value: "0"}, {Name: "grpc-message", Value: ""}}
)

// OK answers with msg (prefixed, see Message) as the one reply message and
// status OK, as grpc-go does: headers, data, trailers.
func (r *Reply) OK(msg []byte) {
	r.Headers(false, OKHeaders)
	r.Data(false, msg)
	r.Headers(true, OKTrailer)
}

// Message frames a marshalled message with gRPC's 5-byte prefix.
func Message(b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// Bytes returns what a server sends after its SETTINGS when script
// answers stream 1.
func Bytes(script func(r *Reply)) []byte {
	var out, hbuf bytes.Buffer
	r := &Reply{Conn: 1, Req: 1, Stream: 1, Framer: http2.NewFramer(&out, nil), enc: hpack.NewEncoder(&hbuf), hbuf: &hbuf}
	script(r)
	return out.Bytes()
}

// New serves reply on a loopback port until the test ends.
func New(t testing.TB, reply func(r *Reply)) *Server {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return Serve(t, lis, reply)
}

// Serve serves reply on lis until the test ends.
func Serve(t testing.TB, lis net.Listener, reply func(r *Reply)) *Server {
	s := &Server{lis: lis, reply: reply}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		lis.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			n := int(s.conns.Add(1))
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s.serve(c, n)
			}()
		}
	}()
	return s
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Conns counts the connections accepted so far.
func (s *Server) Conns() int64 { return s.conns.Load() }

// Reqs counts the requests received whole (or, with OnHeaders, begun).
func (s *Server) Reqs() int64 { return s.reqs.Load() }

// serve reads frames by hand (the Framer would allocate a HEADERS frame
// per request) and writes with a Framer and an indexing HPACK encoder, as
// a real server does. It returns what it received of each stream's DATA
// at once in WINDOW_UPDATEs, as grpc-go's server does, so a client's
// large request sees window updates before any reply.
func (s *Server) serve(c net.Conn, connNo int) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	var hbuf bytes.Buffer
	r := &Reply{Conn: connNo, Framer: http2.NewFramer(c, nil), enc: hpack.NewEncoder(&hbuf), hbuf: &hbuf}
	if r.Framer.WriteSettings() != nil {
		return
	}
	var hdr [9]byte
	payload := make([]byte, 0, 16384)
	var body []byte
	var unacked uint32
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := http2.FrameType(hdr[3]), http2.Flags(hdr[4])
		sid := binary.BigEndian.Uint32(hdr[5:]) & (1<<31 - 1)
		if cap(payload) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(c, payload); err != nil {
			return
		}
		switch typ {
		case http2.FrameSettings:
			if flags&http2.FlagSettingsAck == 0 {
				r.Framer.WriteSettingsAck()
			}
		case http2.FramePing:
			if flags&http2.FlagPingAck == 0 {
				var d [8]byte
				copy(d[:], payload)
				r.Framer.WritePing(true, d)
			}
		case http2.FrameHeaders:
			body = body[:0]
			if s.OnHeaders != nil {
				s.reqs.Add(1)
				r.Req++
				r.Stream, r.Body = sid, nil
				s.OnHeaders(r)
			}
		case http2.FrameData:
			if s.OnHeaders != nil {
				continue
			}
			body = append(body, payload...)
			unacked += uint32(n)
			if unacked >= 32<<10 { // keep the client's windows open
				r.Framer.WriteWindowUpdate(0, unacked)
				r.Framer.WriteWindowUpdate(sid, unacked)
				unacked = 0
			}
			if flags&http2.FlagDataEndStream != 0 {
				s.reqs.Add(1)
				r.Req++
				r.Stream, r.Body = sid, body
				s.reply(r)
				if r.closed {
					// FIN, not RST: what the script wrote must arrive,
					// so wait for the client to close its side.
					if tc, ok := c.(interface{ CloseWrite() error }); ok {
						tc.CloseWrite()
						io.Copy(io.Discard, c)
					}
					return
				}
			}
		}
	}
}
