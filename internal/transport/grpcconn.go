package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/runner/plan"
)

// GRPCConn is one caller's own HTTP/2 connection for unary gRPC calls of
// any method. The caller's goroutine writes the request's HEADERS and DATA
// and reads frames until the trailers itself: grpc-go hands every request
// to its loopy-writer goroutine and every reply back from its reader
// goroutine, and at concurrency 1 those two wake-ups per request cost
// more CPU than the exchange. The connection carries one stream at a
// time, so its state is the current stream's and the connection's
// windows.
//
// What goes on the wire is what grpc-go sends for the same call (the same
// headers, metadata, timeout and accepted encodings), and replies are
// judged as grpc-go judges them: a status in the trailers, an HTTP status
// or content type that is not gRPC, RST_STREAM and GOAWAY all come back as
// the errors GRPCError makes of grpc-go's statuses.
//
// A GRPCConn is not safe for concurrent use. What it returns is valid
// until its next call.
type GRPCConn struct {
	cfg    GRPCConnConfig
	scheme string

	ownConn
	out    frameBuf // frames not yet written: one write per flush
	fr     *http2.Framer
	enc    *hpack.Encoder
	hblock bytes.Buffer // the request's encoded header block
	// cannot carry another stream: GOAWAY seen, a stream left unfinished,
	// or stream ids running out
	closing bool
	goAway  bool // the server sent GOAWAY on this connection
	urgent  bool // out holds a frame the server may be waiting for
	nextID  uint32

	peerMaxFrame   int   // largest DATA frame the server accepts
	peerWindow     int64 // the server's initial stream window
	connSendWindow int64
	connUnacked    uint32 // received bytes not yet returned to the server

	prefix   [5]byte // the request message's prefix
	comp     encoding.Compressor
	zbuf     bytes.Buffer // the compressed request message
	zmsg     [1][]byte    // zbuf as a message of one buffer
	data     dataCursor   // what of the request message is left to frame
	fh       []byte       // the queued DATA frames' headers
	iov      net.Buffers  // the queued DATA frames, headers and payloads
	queued   int          // bytes in iov
	vectored bool         // the connection writes iov with writev
	st       h2stream     // the stream of the call in progress
	reply    GRPCReply

	hdec   *hpack.Decoder
	hb     headerBlock
	hbOpen bool                    // a header block awaits its CONTINUATION
	emitFn func(hpack.HeaderField) // gc.emit, bound once

	dialConn func(context.Context, time.Time) (net.Conn, error) // tests: instead of dialOwn
}

// GRPCConnConfig says where a GRPCConn goes and what it sends besides
// the call.
type GRPCConnConfig struct {
	// Target is host:port: the address dialled and the :authority.
	Target string
	// TLS, when set, is used with ALPN h2 required (see H2TLS); nil:
	// plaintext (h2c with prior knowledge, as grpc-go speaks it).
	TLS  *tls.Config
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds every call besides its context and its own timeout;
	// 0 = none.
	Timeout time.Duration
	// Metadata goes on every call (GRPCMetadata builds it).
	Metadata []hpack.HeaderField
	// AcceptEncoding is sent as grpc-accept-encoding when not empty
	// (GRPCAcceptEncoding: the compressors registered in this process).
	AcceptEncoding string
	// MaxMsg caps the message both ways; 0 = math.MaxInt32, as Triton
	// allows.
	MaxMsg int64
	// Compression names the compressor every request message goes
	// through (gzip, deflate: one registered with grpc-go's encoding
	// package), sent as grpc-encoding; "" sends messages as they are.
	Compression string
	// BusyPoll is how long a blocking connection polls for a reply before
	// it sleeps (0: it sleeps at once); see blockingConn.spinRead.
	BusyPoll time.Duration
}

// GRPCCall is one unary call.
type GRPCCall struct {
	Op     string // names the call in errors, e.g. "infer"
	Method string // the full method path, e.g. "/pkg.Service/Method"
	// Msg is the marshalled request message, as the concatenation of its
	// buffers: a caller may marshal the small fields and point at large
	// byte fields in place.
	Msg [][]byte
}

// GRPCReply is a call's reply. Msg is valid until the connection's next
// call.
type GRPCReply struct {
	Msg []byte // the reply message, decompressed
	// Wait is the time from the request's last byte leaving the client
	// until the reply's HEADERS frame arrived (0 when the reply began
	// while the request was still going out); window updates and pings
	// before it are the server reading, not answering.
	Wait time.Duration
}

// frameBuf collects frames written by the Framer until a flush.
type frameBuf struct{ b []byte }

func (f *frameBuf) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

const (
	// h2DefaultWindow is HTTP/2's initial window before SETTINGS say more.
	h2DefaultWindow = 65535
	// flushEvery bounds how much of a large request is queued before it
	// is written.
	flushEvery = 1 << 20
	// lastStreamID leaves room below 2^31 for the stream ids of one
	// connection; the connection is replaced before it runs out.
	lastStreamID = math.MaxInt32 - 2
)

// GRPCWindow is the stream and connection flow-control window of the own
// connections and, fixed, of the library ones (GRPCDialOptions).
const GRPCWindow = 16 << 20

// grpcUserAgent is grpc-go's, so both paths send the same headers.
var grpcUserAgent = "grpc-go/" + grpc.Version

// NewGRPCConn returns a connection that dials on its first call.
func NewGRPCConn(cfg GRPCConnConfig) *GRPCConn {
	if cfg.MaxMsg <= 0 {
		cfg.MaxMsg = math.MaxInt32
	}
	g := &GRPCConn{cfg: cfg, scheme: "http"}
	if cfg.TLS != nil {
		g.scheme, g.cfg.TLS = "https", H2TLS(cfg.TLS)
	}
	if cfg.Compression != "" {
		// Callers check the name (GRPCCompressor); an unknown one would
		// send uncompressed messages that the header calls compressed.
		g.comp = encoding.GetCompressor(cfg.Compression)
	}
	return g
}

// GRPCCompressor checks that name is a message compressor grpc-go knows in
// this process ("" is none): gzip and deflate (compress.go).
func GRPCCompressor(name string) error {
	if name != "" && encoding.GetCompressor(name) == nil {
		return fmt.Errorf("grpc compression %q is not available (have: %s)", name, GRPCAcceptEncoding())
	}
	return nil
}

// dial connects, sends the connection preface with this client's settings
// and window, and reads the server's SETTINGS, so the first request knows
// the server's frame size and windows.
func (gc *GRPCConn) dial(ctx context.Context, deadline time.Time) error {
	var nc net.Conn
	var err error
	if gc.dialConn != nil {
		nc, err = gc.dialConn(ctx, deadline)
	} else {
		nc, err = dialOwn(ctx, gc.cfg.Dial, gc.cfg.Target, deadline, gc.cfg.TLS, "h2", gc.cfg.BusyPoll)
	}
	if err != nil {
		return err
	}
	return gc.start(nc, deadline)
}

// start runs the connection preface on nc.
func (gc *GRPCConn) start(nc net.Conn, deadline time.Time) error {
	gc.attach(nc, 32<<10)
	gc.vectored = canWritev(nc)
	if gc.fh == nil {
		// Room for the headers of a flush's frames at the smallest frame
		// size a server may choose.
		gc.fh = make([]byte, 0, 9*(flushEvery/16384+2))
	}
	gc.closing, gc.goAway, gc.urgent, gc.nextID = false, false, false, 1
	gc.out.b = gc.out.b[:0]
	gc.fr = http2.NewFramer(&gc.out, gc.br)
	if gc.emitFn == nil {
		gc.emitFn = gc.emit
	}
	gc.hdec = hpack.NewDecoder(4096, gc.emitFn)
	gc.hdec.SetMaxStringLength(maxHeaderList)
	gc.hb, gc.hbOpen = headerBlock{fields: gc.hb.fields[:0]}, false
	gc.fr.SetReuseFrames()
	gc.fr.SetMaxReadFrameSize(ownDataMax)
	gc.enc = hpack.NewEncoder(&gc.hblock)
	gc.peerMaxFrame, gc.peerWindow, gc.connSendWindow, gc.connUnacked = 16384, h2DefaultWindow, h2DefaultWindow, 0
	gc.st = h2stream{msg: gc.st.msg}

	nc.SetDeadline(deadline)
	gc.out.b = append(gc.out.b, http2.ClientPreface...)
	gc.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: GRPCWindow},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: ownDataMax},
	)
	gc.fr.WriteWindowUpdate(0, GRPCWindow-h2DefaultWindow)
	if err := gc.flush(); err != nil {
		return err
	}
	f, err := gc.fr.ReadFrame()
	if err != nil {
		return notH2(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return fmt.Errorf("server did not begin with HTTP/2 SETTINGS (first frame %v)", f.Header().Type)
	}
	return gc.settings(sf) // its acknowledgement goes out with the first request
}

// notH2 says what an HTTP/1.1 server's reply to the preface looks like
// through an HTTP/2 framer.
func notH2(err error) error {
	if errors.Is(err, http2.ErrFrameTooLarge) {
		return fmt.Errorf("reading the server's HTTP/2 preface: %w (not an HTTP/2 server?)", err)
	}
	return err
}

// Invoke makes one unary call. Its errors are those GRPCError makes:
// *TransportError for failures to reach the server or complete the
// exchange (UNAVAILABLE, deadlines and cancellation included),
// *ServerError for a status the server sent.
func (gc *GRPCConn) Invoke(ctx context.Context, call *GRPCCall, timeout time.Duration) (*GRPCReply, error) {
	deadline, limit := CallDeadline(ctx, time.Now(), gc.cfg.Timeout, timeout)
	body := call.Msg
	if gc.comp != nil {
		// Compressing is the client's time, as in grpc-go, where it
		// happens on the calling goroutine before the message is queued.
		if err := gc.compress(body); err != nil {
			return nil, GRPCError(ctx, call.Op, status.Errorf(codes.Internal, "grpc: error while compressing: %v", err))
		}
		body = gc.zmsg[:]
	}
	n := int64(bodyLen(body))
	if n > gc.cfg.MaxMsg {
		return nil, GRPCError(ctx, call.Op, status.Errorf(codes.ResourceExhausted, "trying to send message larger than max (%d vs. %d)", n, gc.cfg.MaxMsg))
	}
	gc.prefix = [5]byte{}
	if gc.comp != nil {
		gc.prefix[0] = 1 // the compressed flag
	}
	putUint32(gc.prefix[1:], uint32(n))
	gc.cancelWatch.watch(ctx)

	var wrote time.Time
	for attempt := 0; ; attempt++ {
		gc.dropDead()
		if gc.nc == nil {
			if err := gc.dial(ctx, deadline); err != nil {
				gc.drop()
				return nil, gc.transportError(ctx, call, limit, err)
			}
		}
		reused := gc.reused && attempt == 0
		gc.nc.SetDeadline(deadline)
		if err := ctx.Err(); err != nil { // cancelled before the deadline above took hold
			gc.drop()
			return nil, gc.transportError(ctx, call, limit, err)
		}
		if err := gc.encodeHeaders(call.Method, deadline); err != nil {
			if status.Code(err) == codes.DeadlineExceeded {
				// The deadline passed before the call could start (a dial
				// that took the whole timeout on a busy machine): the same
				// timeout, named the same way, as one that passes later.
				return nil, gc.transportError(ctx, call, limit, os.ErrDeadlineExceeded)
			}
			return nil, GRPCError(ctx, call.Op, err)
		}
		gc.st = h2stream{id: gc.nextID, sendWindow: gc.peerWindow, msg: gc.st.msg[:0], msgLen: -1, maxMsg: gc.cfg.MaxMsg}
		gc.nextID += 2
		if gc.nextID > lastStreamID {
			gc.closing = true
		}
		err := gc.send(body)
		wrote = time.Now()
		if err == nil {
			err = gc.await()
		}
		st := &gc.st
		if err != nil {
			gc.drop()
			// A kept-alive connection the server closed while idle fails
			// before any frame of the reply, and the request goes once
			// more on a fresh connection, as on the HTTP path: grpc-go's
			// reader goroutine would have seen the close before sending.
			if reused && !st.seen && !gc.goAway && isConnReset(err) {
				continue
			}
			var se http2.StreamError
			if errors.As(err, &se) && se.StreamID == st.id {
				return nil, GRPCError(ctx, call.Op, status.New(h2Code(se.Code), se.Error()).Err())
			}
			return nil, gc.transportError(ctx, call, limit, err)
		}
		if !st.ended || gc.closing {
			gc.drop()
		} else {
			gc.reused = true
		}
		// A stream the server did not process (refused, or beyond a
		// GOAWAY's last stream) is sent again once on a new connection,
		// as grpc-go's transparent retry does.
		if st.refused && attempt == 0 {
			continue
		}
		break
	}
	st := &gc.st
	if e := st.status(deadline); e != nil {
		return nil, GRPCError(ctx, call.Op, e)
	}
	msg, err := st.replyMessage()
	if err != nil {
		return nil, GRPCError(ctx, call.Op, err)
	}
	gc.reply = GRPCReply{Msg: msg, Wait: max(st.first.Sub(wrote), 0)}
	return &gc.reply, nil
}

// compress writes msg through the connection's compressor into zbuf.
func (gc *GRPCConn) compress(msg [][]byte) error {
	gc.zbuf.Reset()
	w, err := gc.comp.Compress(&gc.zbuf)
	if err != nil {
		return err
	}
	for _, b := range msg {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	gc.zmsg[0] = gc.zbuf.Bytes()
	return nil
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// encodeHeaders writes the request's header block in grpc-go's order.
func (gc *GRPCConn) encodeHeaders(method string, deadline time.Time) error {
	// The timeout is known before any field is written: a field written
	// adds to the encoder's table, which must then reach the server.
	var timeout string
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
		}
		timeout = encodeGRPCTimeout(d)
	}
	gc.hblock.Reset()
	e := gc.enc
	e.WriteField(hpack.HeaderField{Name: ":method", Value: "POST"})
	e.WriteField(hpack.HeaderField{Name: ":scheme", Value: gc.scheme})
	e.WriteField(hpack.HeaderField{Name: ":path", Value: method})
	e.WriteField(hpack.HeaderField{Name: ":authority", Value: gc.cfg.Target})
	e.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc+proto"}) // as with grpc-go's proto codec forced
	e.WriteField(hpack.HeaderField{Name: "user-agent", Value: grpcUserAgent})
	e.WriteField(hpack.HeaderField{Name: "te", Value: "trailers"})
	if gc.comp != nil {
		e.WriteField(hpack.HeaderField{Name: "grpc-encoding", Value: gc.cfg.Compression})
	}
	if gc.cfg.AcceptEncoding != "" {
		e.WriteField(hpack.HeaderField{Name: "grpc-accept-encoding", Value: gc.cfg.AcceptEncoding})
	}
	if timeout != "" {
		// Never indexed: a new value on every call would churn the
		// dynamic table that keeps the other fields one byte each.
		e.WriteField(hpack.HeaderField{Name: "grpc-timeout", Value: timeout, Sensitive: true})
	}
	for _, f := range gc.cfg.Metadata {
		e.WriteField(f)
	}
	return nil
}

// send writes HEADERS (with CONTINUATIONs when the block exceeds the
// server's frame size) and the message in DATA frames within the server's
// windows, waiting for WINDOW_UPDATEs when they are spent. The payloads
// go from the message's own buffers (writev), never copied together. A
// reply that ends the stream while the request is still going out stops
// the sending.
func (gc *GRPCConn) send(msg [][]byte) error {
	st := &gc.st
	block := gc.hblock.Bytes()
	first := block
	if len(first) > gc.peerMaxFrame {
		first = first[:gc.peerMaxFrame]
	}
	block = block[len(first):]
	gc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: first, EndHeaders: len(block) == 0})
	for len(block) > 0 {
		n := min(len(block), gc.peerMaxFrame)
		gc.fr.WriteContinuation(st.id, n == len(block), block[:n])
		block = block[n:]
	}
	gc.data = gc.data.start(gc.prefix[:], msg)
	for gc.data.left > 0 {
		n := min(int64(min(gc.data.left, gc.peerMaxFrame)), st.sendWindow, gc.connSendWindow)
		if n <= 0 {
			if err := gc.flush(); err != nil {
				return err
			}
			if err := gc.readFrame(); err != nil {
				return err
			}
			if st.done {
				// The reply came before the whole request went out: the
				// stream is over for the server, and this side of it is
				// left open, so the connection carries no more.
				gc.closing = true
				return nil
			}
			continue
		}
		if len(gc.fh)+9 > cap(gc.fh) || gc.queued >= flushEvery {
			if err := gc.flush(); err != nil {
				return err
			}
		}
		gc.queueData(st.id, int(n))
		st.sendWindow -= n
		gc.connSendWindow -= n
	}
	return gc.flush()
}

// dataCursor walks the message's buffers (prefix first) as DATA frames
// take them.
type dataCursor struct {
	bufs [][]byte
	left int // bytes not yet framed
}

func (d dataCursor) start(prefix []byte, msg [][]byte) dataCursor {
	d.bufs = append(append(d.bufs[:0], prefix), msg...)
	d.left = bodyLen(d.bufs)
	return d
}

// queueData queues one DATA frame of the next n message bytes: its header
// in fh, its payload as slices of the message's own buffers.
func (gc *GRPCConn) queueData(stream uint32, n int) {
	d := &gc.data
	gc.queued += 9 + n
	d.left -= n
	var flags byte
	if d.left == 0 {
		flags = byte(http2.FlagDataEndStream)
	}
	k := len(gc.fh)
	gc.fh = append(gc.fh, byte(n>>16), byte(n>>8), byte(n), byte(http2.FrameData), flags, 0, 0, 0, 0)
	putUint32(gc.fh[k+5:], stream)
	gc.iov = append(gc.iov, gc.fh[k:k+9])
	for n > 0 {
		b := d.bufs[0]
		m := min(n, len(b))
		if m > 0 {
			gc.iov = append(gc.iov, b[:m])
		}
		d.bufs[0] = b[m:]
		if len(d.bufs[0]) == 0 {
			d.bufs = d.bufs[1:]
		}
		n -= m
	}
}

// flush writes the frames queued: those the Framer wrote, then the DATA
// frames. Large payloads go with one writev where the connection has it
// (a TCP socket); small ones, and any over TLS (which would make a record
// of each buffer), are copied behind the other frames into one write.
func (gc *GRPCConn) flush() error {
	defer func() {
		gc.out.b = gc.out.b[:0]
		clear(gc.iov) // keep no tensor alive through the connection
		gc.iov, gc.fh, gc.queued = gc.iov[:0], gc.fh[:0], 0
	}()
	if gc.vectored && gc.queued >= largeBody {
		gc.iov = append(gc.iov, nil)
		copy(gc.iov[1:], gc.iov)
		gc.iov[0] = gc.out.b
		_, err := writeBuffers(gc.nc, gc.iov)
		return err
	}
	for _, b := range gc.iov {
		gc.out.b = append(gc.out.b, b...)
	}
	if len(gc.out.b) == 0 {
		return nil
	}
	_, err := gc.nc.Write(gc.out.b)
	return err
}

func (gc *GRPCConn) transportError(ctx context.Context, call *GRPCCall, limit time.Duration, err error) error {
	return &TransportError{Protocol: plan.ProtocolGRPC, Op: call.Op,
		Err: fmt.Errorf("%s%s: %w", gc.cfg.Target, call.Method, callFailure(ctx, limit, err))}
}
