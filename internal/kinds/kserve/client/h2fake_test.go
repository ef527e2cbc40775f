package client

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
	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kinds/kserve/wire/inferencepb"
)

// h2Fake is an HTTP/2 server written for tests, down to the frames: each
// request (HEADERS, then DATA up to END_STREAM) is answered by a script
// that writes whatever frames the test needs, including ones no grpc-go
// server would send. Its steady state allocates nothing, so the client's
// allocations can be counted alone.
type h2Fake struct {
	lis   net.Listener
	reply func(r *h2Reply)
	// onHeaders, when set, answers at the request's HEADERS instead, and
	// the server never opens its receive windows: a server that rejects
	// a large request before reading it.
	onHeaders func(r *h2Reply)
	conns     atomic.Int64 // connections accepted
	reqs      atomic.Int64 // requests whose END_STREAM arrived

	mu   sync.Mutex
	open []net.Conn
}

// h2Reply is the state a script writes one reply with.
type h2Reply struct {
	Conn, Req int // connection number and request number on it, from 1
	Stream    uint32
	Body      []byte // the request's DATA, as received
	fr        *http2.Framer
	enc       *hpack.Encoder
	hbuf      *bytes.Buffer
	closed    bool
}

func (r *h2Reply) Headers(end bool, fields []hpack.HeaderField) {
	r.hbuf.Reset()
	for _, f := range fields {
		r.enc.WriteField(f)
	}
	r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: r.Stream, BlockFragment: r.hbuf.Bytes(), EndHeaders: true, EndStream: end})
}

// SplitHeaders writes fields as a HEADERS frame and CONTINUATIONs of at
// most n bytes of header block each.
func (r *h2Reply) SplitHeaders(end bool, n int, fields []hpack.HeaderField) {
	r.hbuf.Reset()
	for _, f := range fields {
		r.enc.WriteField(f)
	}
	block := r.hbuf.Bytes()
	first := block[:min(n, len(block))]
	block = block[len(first):]
	r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: r.Stream, BlockFragment: first, EndHeaders: len(block) == 0, EndStream: end})
	for len(block) > 0 {
		k := min(n, len(block))
		r.fr.WriteContinuation(r.Stream, k == len(block), block[:k])
		block = block[k:]
	}
}

func (r *h2Reply) Data(end bool, b []byte) {
	for len(b) > 16384 {
		r.fr.WriteData(r.Stream, false, b[:16384])
		b = b[16384:]
	}
	r.fr.WriteData(r.Stream, end, b)
}

func (r *h2Reply) RST(code http2.ErrCode) { r.fr.WriteRSTStream(r.Stream, code) }
func (r *h2Reply) GoAway(last uint32)     { r.fr.WriteGoAway(last, http2.ErrCodeNo, nil) }
func (r *h2Reply) Close()                 { r.closed = true }

var (
	grpcOKHeaders = []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"}}
	grpcOKTrailer = []hpack.HeaderField{{Name: "grpc-status", Value: "0"}, {Name: "grpc-message", Value: ""}}
)

// OK answers with msg as the one reply message and status OK, as grpc-go
// does: headers, data, trailers.
func (r *h2Reply) OK(msg []byte) {
	r.Headers(false, grpcOKHeaders)
	r.Data(false, msg)
	r.Headers(true, grpcOKTrailer)
}

// grpcMessage frames a protobuf message with gRPC's 5-byte prefix.
func grpcMessage(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// simpleReplyMsg is the simple model's reply to simpleRequest.
func simpleReplyMsg(t testing.TB) []byte {
	sum, diff, _ := addSub(simpleRequest("").Inputs[0].Raw, simpleRequest("").Inputs[1].Raw)
	return grpcMessage(t, &pb.ModelInferResponse{
		ModelName: "simple", ModelVersion: "1",
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{
			{Name: "OUTPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "OUTPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawOutputContents: [][]byte{sum, diff},
	})
}

func newH2Fake(t testing.TB, reply func(r *h2Reply)) *h2Fake {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Fake{lis: lis, reply: reply}
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

func (s *h2Fake) addr() string { return s.lis.Addr().String() }

// serve reads frames by hand (the Framer would allocate a HEADERS frame
// per request) and writes with a Framer and an indexing HPACK encoder, as
// a real server does.
func (s *h2Fake) serve(c net.Conn, connNo int) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	var hbuf bytes.Buffer
	r := &h2Reply{Conn: connNo, fr: http2.NewFramer(c, nil), enc: hpack.NewEncoder(&hbuf), hbuf: &hbuf}
	if r.fr.WriteSettings() != nil {
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
				r.fr.WriteSettingsAck()
			}
		case http2.FramePing:
			if flags&http2.FlagPingAck == 0 {
				var d [8]byte
				copy(d[:], payload)
				r.fr.WritePing(true, d)
			}
		case http2.FrameHeaders:
			body = body[:0]
			if s.onHeaders != nil {
				s.reqs.Add(1)
				r.Req++
				r.Stream, r.Body = sid, nil
				s.onHeaders(r)
			}
		case http2.FrameData:
			if s.onHeaders != nil {
				continue
			}
			body = append(body, payload...)
			unacked += uint32(n)
			if unacked >= 32<<10 { // keep the client's connection window open
				r.fr.WriteWindowUpdate(0, unacked)
				r.fr.WriteWindowUpdate(sid, unacked)
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
					if tc, ok := c.(*net.TCPConn); ok {
						tc.CloseWrite()
						io.Copy(io.Discard, c)
					}
					return
				}
			}
		}
	}
}
