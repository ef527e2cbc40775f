package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/perfscen/perfscen/internal/kinds/kserve/wire/inferencepb"
	"github.com/perfscen/perfscen/internal/transport"
	"github.com/perfscen/perfscen/runner/plan"
)

// grpcConn is one caller's own HTTP/2 connection for unary ModelInfer
// calls. The caller's goroutine writes the request's HEADERS and DATA and
// reads frames until the trailers itself: grpc-go hands every request to
// its loopy-writer goroutine and every reply back from its reader
// goroutine, and at concurrency 1 those two wake-ups per request cost
// more CPU than the exchange. The connection carries one stream at a time,
// so its state is the current stream's and the connection's windows.
//
// What goes on the wire is what grpc-go sends for the same call (the same
// headers, metadata, timeout and accepted encodings), and replies are
// judged as grpc-go judges them: a status in the trailers, an HTTP status
// or content type that is not gRPC, RST_STREAM and GOAWAY all come back as
// the errors grpcError makes of grpc-go's statuses.
type grpcConn struct {
	c *grpcClient

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

	req requestProto
	msg []byte   // the request message with its 5-byte prefix, reused
	st  h2stream // the stream of the call in progress

	hdec   *hpack.Decoder
	hb     headerBlock
	emitFn func(hpack.HeaderField) // gc.emit, bound once

	dialConn func(context.Context, time.Time) (net.Conn, error) // tests: instead of dialOwn
}

// h2stream is what one call has learned of its stream.
type h2stream struct {
	id         uint32
	sendWindow int64
	unacked    uint32 // received on this stream, not yet returned
	seen       bool   // some frame of this stream arrived
	first      time.Time
	headers    bool // response headers (or trailers-only) arrived
	encoding   string
	msg        []byte // the reply message with its prefix, reused
	msgLen     int64  // declared length; -1 until the prefix is in
	done       bool   // nothing more will come for this stream
	ended      bool   // done with END_STREAM, not RST_STREAM or GOAWAY
	trailers   bool   // a status arrived
	code       codes.Code
	message    string
	fail       *status.Status // failure found while reading, before trailers
	rst        *http2.ErrCode
	refused    bool // not processed by the server: safe to send again
}

// frameBuf collects frames written by the Framer until a flush.
type frameBuf struct{ b []byte }

func (f *frameBuf) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

const (
	grpcInferPath = "/inference.GRPCInferenceService/ModelInfer"
	// h2DefaultWindow is HTTP/2's initial window before SETTINGS say more.
	h2DefaultWindow = 65535
	// flushEvery bounds how much of a large request is buffered before
	// it is written.
	flushEvery = 256 << 10
	// lastStreamID leaves room below 2^31 for the stream ids of one
	// connection; the connection is replaced before it runs out.
	lastStreamID = math.MaxInt32 - 2
)

// grpcMaxMsg is the message size limit both ways, INT32_MAX as Triton
// allows and as the shared client is configured; a var for tests.
var grpcMaxMsg int64 = math.MaxInt32

// grpcUserAgent is grpc-go's, so both paths send the same headers.
var grpcUserAgent = "grpc-go/" + grpc.Version

// NewConn returns a connection of the caller's own, or nil when the options
// need the shared grpc-go connections: MaxConnections asks for a number of
// connections that requests are spread over, and metadata gRPC does not
// allow on the wire stays grpc-go's to refuse.
func (c *grpcClient) NewConn() Conn {
	if c.opts.MaxConnections > 0 || !c.mdOK {
		return nil
	}
	return &grpcConn{c: c}
}

// grpcHeaderMD returns the metadata as header fields in a fixed order, or
// nil when a key or value cannot go on the wire as gRPC metadata.
func grpcHeaderMD(md map[string]string) []hpack.HeaderField {
	out := make([]hpack.HeaderField, 0, len(md))
	for k, v := range md {
		if !validMDKey(k) {
			return nil
		}
		if isReservedGRPCHeader(k) {
			continue // grpc-go leaves these out too
		}
		if len(k) > 4 && k[len(k)-4:] == "-bin" {
			v = base64.RawStdEncoding.EncodeToString([]byte(v))
		} else if !validMDValue(v) {
			return nil
		}
		out = append(out, hpack.HeaderField{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func validMDKey(k string) bool {
	if k == "" {
		return false
	}
	for i := range len(k) {
		ch := k[i]
		if !('a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return false
		}
	}
	return true
}

func validMDValue(v string) bool {
	for i := range len(v) {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// isReservedGRPCHeader names the headers the transport writes itself.
func isReservedGRPCHeader(k string) bool {
	switch k {
	case "content-type", "user-agent", "grpc-message-type", "grpc-encoding",
		"grpc-message", "grpc-status", "grpc-timeout", "te":
		return true
	}
	return false
}

// dial connects, sends the connection preface with this client's settings
// and window, and reads the server's SETTINGS, so the first request knows
// the server's frame size and windows.
func (gc *grpcConn) dial(ctx context.Context, deadline time.Time) error {
	var nc net.Conn
	var err error
	if gc.dialConn != nil {
		nc, err = gc.dialConn(ctx, deadline)
	} else {
		nc, err = dialOwn(ctx, gc.c.opts.Dial, gc.c.target, deadline, gc.c.tlsCfg, "h2")
	}
	if err != nil {
		return err
	}
	return gc.start(nc, deadline)
}

// start runs the connection preface on nc.
func (gc *grpcConn) start(nc net.Conn, deadline time.Time) error {
	gc.attach(nc, 32<<10)
	gc.closing, gc.goAway, gc.urgent, gc.nextID = false, false, false, 1
	gc.out.b = gc.out.b[:0]
	gc.fr = http2.NewFramer(&gc.out, gc.br)
	if gc.emitFn == nil {
		gc.emitFn = gc.emit
	}
	gc.hdec = hpack.NewDecoder(4096, gc.emitFn)
	gc.hdec.SetMaxStringLength(maxHeaderList)
	gc.hb = headerBlock{fields: gc.hb.fields[:0]}
	gc.fr.SetReuseFrames()
	gc.enc = hpack.NewEncoder(&gc.hblock)
	gc.peerMaxFrame, gc.peerWindow, gc.connSendWindow, gc.connUnacked = 16384, h2DefaultWindow, h2DefaultWindow, 0
	gc.st = h2stream{msg: gc.st.msg}

	nc.SetDeadline(deadline)
	gc.out.b = append(gc.out.b, http2.ClientPreface...)
	gc.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: grpcWindow},
	)
	gc.fr.WriteWindowUpdate(0, grpcWindow-h2DefaultWindow)
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

func (gc *grpcConn) flush() error {
	if len(gc.out.b) == 0 {
		return nil
	}
	_, err := gc.nc.Write(gc.out.b)
	gc.out.b = gc.out.b[:0]
	return err
}

func (gc *grpcConn) Infer(ctx context.Context, req *InferRequest, timeout time.Duration) (*InferResponse, error) {
	const op = "infer"
	if req.Model == "" {
		return nil, fmt.Errorf("grpc infer: empty model name")
	}
	start := time.Now()
	deadline, limit := callDeadline(ctx, start, gc.c.opts.Timeout, timeout)
	m, err := gc.req.fill(req)
	if err != nil {
		return nil, fmt.Errorf("grpc %s: %w", op, err)
	}
	gc.msg, err = proto.MarshalOptions{}.MarshalAppend(append(gc.msg[:0], 0, 0, 0, 0, 0), m)
	if err != nil {
		return nil, grpcError(ctx, op, status.Errorf(codes.Internal, "grpc: error while marshaling: %v", err))
	}
	if n := int64(len(gc.msg) - 5); n > grpcMaxMsg {
		return nil, grpcError(ctx, op, status.Errorf(codes.ResourceExhausted, "trying to send message larger than max (%d vs. %d)", n, grpcMaxMsg))
	}
	putUint32(gc.msg[1:5], uint32(len(gc.msg)-5))
	gc.cancelWatch.watch(ctx)

	var wrote time.Time
	for attempt := 0; ; attempt++ {
		gc.dropDead()
		if gc.nc == nil {
			if err := gc.dial(ctx, deadline); err != nil {
				gc.drop()
				return nil, gc.transportError(ctx, limit, err)
			}
		}
		reused := gc.reused && attempt == 0
		gc.nc.SetDeadline(deadline)
		if err := ctx.Err(); err != nil { // cancelled before the deadline above took hold
			gc.drop()
			return nil, gc.transportError(ctx, limit, err)
		}
		if err := gc.encodeHeaders(deadline); err != nil {
			return nil, grpcError(ctx, op, err)
		}
		gc.st = h2stream{id: gc.nextID, sendWindow: gc.peerWindow, msg: gc.st.msg[:0], msgLen: -1}
		gc.nextID += 2
		if gc.nextID > lastStreamID {
			gc.closing = true
		}
		err := gc.send()
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
				return nil, grpcError(ctx, op, status.New(h2Code(se.Code), se.Error()).Err())
			}
			return nil, gc.transportError(ctx, limit, err)
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
		return nil, grpcError(ctx, op, e)
	}
	r, err := st.decode()
	if err != nil {
		return nil, grpcError(ctx, op, err)
	}
	out, err := inferResponseFromProto(r, req)
	if err != nil {
		return nil, &transport.ProtocolError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	wait := st.first.Sub(wrote)
	if wait < 0 {
		wait = 0
	}
	out.Timing = Timing{Wait: wait, SendRecv: time.Since(start) - wait}
	return out, nil
}

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// encodeHeaders writes the request's header block in grpc-go's order.
func (gc *grpcConn) encodeHeaders(deadline time.Time) error {
	c := gc.c
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
	e.WriteField(hpack.HeaderField{Name: ":scheme", Value: c.scheme})
	e.WriteField(hpack.HeaderField{Name: ":path", Value: grpcInferPath})
	e.WriteField(hpack.HeaderField{Name: ":authority", Value: c.target})
	e.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc+proto"}) // as with the shared client's forced proto codec
	e.WriteField(hpack.HeaderField{Name: "user-agent", Value: grpcUserAgent})
	e.WriteField(hpack.HeaderField{Name: "te", Value: "trailers"})
	if c.acceptEncoding != "" {
		e.WriteField(hpack.HeaderField{Name: "grpc-accept-encoding", Value: c.acceptEncoding})
	}
	if timeout != "" {
		// Never indexed: a new value on every call would churn the
		// dynamic table that keeps the other fields one byte each.
		e.WriteField(hpack.HeaderField{Name: "grpc-timeout", Value: timeout, Sensitive: true})
	}
	for _, f := range c.md {
		e.WriteField(f)
	}
	return nil
}

// encodeGRPCTimeout writes d in the largest precision whose value fits the
// 8 digits gRPC allows, rounding up so the server never sees less time
// than the client gives.
func encodeGRPCTimeout(d time.Duration) string {
	const maxValue = 99999999
	units := [...]struct {
		d time.Duration
		u byte
	}{{time.Nanosecond, 'n'}, {time.Microsecond, 'u'}, {time.Millisecond, 'm'}, {time.Second, 'S'}, {time.Minute, 'M'}, {time.Hour, 'H'}}
	for i, u := range units {
		v := d / u.d
		if d%u.d != 0 {
			v++
		}
		if v <= maxValue || i == len(units)-1 {
			var buf [24]byte
			return string(append(strconv.AppendInt(buf[:0], int64(v), 10), u.u))
		}
	}
	panic("unreachable")
}

// send writes HEADERS (with CONTINUATIONs when the block exceeds the
// server's frame size) and the message in DATA frames within the server's
// windows, waiting for WINDOW_UPDATEs when they are spent. A reply that
// ends the stream while the request is still going out stops the sending.
func (gc *grpcConn) send() error {
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
	data := gc.msg
	for len(data) > 0 {
		n := int64(min(len(data), gc.peerMaxFrame))
		n = min(n, st.sendWindow, gc.connSendWindow)
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
		gc.fr.WriteData(st.id, int(n) == len(data), data[:n])
		st.sendWindow -= n
		gc.connSendWindow -= n
		data = data[n:]
		if len(gc.out.b) >= flushEvery {
			if err := gc.flush(); err != nil {
				return err
			}
		}
	}
	return gc.flush()
}

// await reads frames until the stream is done.
func (gc *grpcConn) await() error {
	for !gc.st.done {
		if err := gc.readFrame(); err != nil {
			return err
		}
	}
	return nil
}

// readFrame reads and handles one frame. WINDOW_UPDATEs are written at
// once, since the server may be waiting for them; PING and SETTINGS
// acknowledgements go out with the next request instead. grpc-go servers
// ping on every request they receive (bandwidth-delay estimation), and an
// immediate acknowledgement was one write(2) per request more.
func (gc *grpcConn) readFrame() error {
	f, err := gc.fr.ReadFrame()
	if err != nil {
		return err
	}
	if err := gc.handle(f); err != nil {
		return err
	}
	if gc.urgent {
		gc.urgent = false
		return gc.flush()
	}
	return nil
}

func (gc *grpcConn) handle(f http2.Frame) error {
	st := &gc.st
	mine := f.Header().StreamID == st.id && !st.done
	if mine && !st.seen {
		st.seen, st.first = true, time.Now()
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		n := f.Header().Length // padding counts against the windows too
		gc.connUnacked += n
		if gc.connUnacked >= grpcWindow/4 {
			gc.fr.WriteWindowUpdate(0, gc.connUnacked)
			gc.connUnacked, gc.urgent = 0, true
		}
		if !mine {
			return nil
		}
		st.data(f.Data())
		st.unacked += n
		if f.StreamEnded() {
			st.end()
		} else if st.unacked >= grpcWindow/4 {
			gc.fr.WriteWindowUpdate(st.id, st.unacked)
			st.unacked, gc.urgent = 0, true
		}
	case *http2.HeadersFrame:
		gc.hb = headerBlock{stream: f.StreamID, endStream: f.StreamEnded(), fields: gc.hb.fields[:0]}
		return gc.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), mine)
	case *http2.ContinuationFrame: // the Framer checks it continues the block
		return gc.headerFragment(f.HeaderBlockFragment(), f.HeadersEnded(), mine)
	case *http2.RSTStreamFrame:
		if mine {
			code := f.ErrCode
			st.rst, st.done = &code, true
			st.refused = code == http2.ErrCodeRefusedStream
		}
	case *http2.SettingsFrame:
		return gc.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			gc.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		gc.closing, gc.goAway = true, true
		if st.id > f.LastStreamID && !st.done {
			st.done, st.refused = true, true
		}
	case *http2.WindowUpdateFrame:
		switch {
		case f.StreamID == 0:
			gc.connSendWindow += int64(f.Increment)
		case mine:
			st.sendWindow += int64(f.Increment)
		}
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	return nil
}

// maxHeaderList bounds a reply's decoded header list, as x/net/http2's
// default does.
const maxHeaderList = 16 << 20

// headerBlock is the header list being decoded from HEADERS and its
// CONTINUATIONs. Every block is decoded, whatever its stream: the HPACK
// table is the connection's.
type headerBlock struct {
	stream    uint32
	endStream bool
	fields    []hpack.HeaderField
	size      uint32
	truncated bool
	invalid   bool // a pseudo-header a response may not carry, or one after a regular field
	regular   bool
}

// emit collects one decoded field. It is the decoder's callback for the
// connection's life (x/net/http2's MetaHeadersFrame reading would cost
// several allocations per frame).
func (gc *grpcConn) emit(f hpack.HeaderField) {
	hb := &gc.hb
	if hb.truncated {
		return
	}
	if hb.size += f.Size(); hb.size > maxHeaderList {
		hb.truncated = true
		return
	}
	if len(f.Name) > 0 && f.Name[0] == ':' {
		hb.invalid = hb.invalid || hb.regular || f.Name != ":status"
	} else {
		hb.regular = true
	}
	hb.fields = append(hb.fields, f)
}

func (gc *grpcConn) headerFragment(frag []byte, end, mine bool) error {
	if _, err := gc.hdec.Write(frag); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if !end {
		return nil
	}
	if err := gc.hdec.Close(); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if mine {
		gc.st.header(&gc.hb)
	}
	return nil
}

// settings applies the server's SETTINGS and acknowledges them.
func (gc *grpcConn) settings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - gc.peerWindow
			gc.peerWindow = int64(s.Val)
			gc.st.sendWindow += delta
		case http2.SettingMaxFrameSize:
			gc.peerMaxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			gc.enc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return gc.fr.WriteSettingsAck()
}

func (gc *grpcConn) transportError(ctx context.Context, limit time.Duration, err error) error {
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		if limit > 0 {
			err = fmt.Errorf("%w (no reply within %v)", context.DeadlineExceeded, limit)
		} else {
			err = context.DeadlineExceeded
		}
	}
	return &transport.TransportError{Protocol: plan.ProtocolGRPC, Op: "infer", Err: fmt.Errorf("%s%s: %w", gc.c.target, grpcInferPath, err)}
}

// data appends a DATA frame's payload to the reply message, checking the
// declared length against the limit and the unary call's one message.
func (st *h2stream) data(p []byte) {
	if st.fail != nil || len(p) == 0 {
		return
	}
	if !st.headers {
		st.failWith(codes.Internal, "DATA frame before response headers")
		return
	}
	if st.msgLen >= 0 && int64(len(st.msg))+int64(len(p)) > 5+st.msgLen {
		st.failWith(codes.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message")
		return
	}
	if st.msgLen < 0 && len(st.msg)+len(p) >= 5 {
		var prefix [5]byte
		k := copy(prefix[:], st.msg)
		copy(prefix[k:], p)
		st.msgLen = int64(prefix[1])<<24 | int64(prefix[2])<<16 | int64(prefix[3])<<8 | int64(prefix[4])
		if st.msgLen > grpcMaxMsg {
			st.failWith(codes.ResourceExhausted, fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", st.msgLen, grpcMaxMsg))
			return
		}
		if int64(len(st.msg))+int64(len(p)) > 5+st.msgLen {
			st.failWith(codes.Internal, "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message")
			return
		}
	}
	st.msg = append(st.msg, p...)
}

// failWith records the call's failure; nothing more of the stream is
// read (the connection, left mid-stream, is not reused).
func (st *h2stream) failWith(code codes.Code, msg string) {
	if st.fail == nil {
		st.fail = status.New(code, msg)
	}
	st.done = true
}

func (st *h2stream) end() { st.done, st.ended = true, true }

// header handles the response headers, trailers, or both at once
// (trailers-only), as grpc-go reads them.
func (st *h2stream) header(f *headerBlock) {
	endStream := f.endStream
	if endStream {
		st.end()
	}
	if f.truncated {
		st.failWith(codes.Internal, "peer header list size exceeded limit")
		return
	}
	if f.invalid {
		st.failWith(codes.Internal, "invalid pseudo-header in a response")
		return
	}
	if st.headers && !endStream {
		st.failWith(codes.Internal, "a HEADERS frame cannot appear in the middle of a stream")
		return
	}
	initial := !st.headers
	isGRPC := !initial
	ctErr := "malformed header: missing HTTP content-type"
	var httpStatus, grpcStatus, grpcMessage string
	hasStatus := false
	for _, hf := range f.fields {
		switch hf.Name {
		case "content-type":
			if !isGRPCContentType(hf.Value) {
				ctErr = fmt.Sprintf("transport: received unexpected content-type %q", hf.Value)
				break
			}
			ctErr, isGRPC = "", true
		case "grpc-encoding":
			st.encoding = hf.Value
		case "grpc-status":
			grpcStatus, hasStatus = hf.Value, true
		case "grpc-message":
			grpcMessage = hf.Value
		case ":status":
			httpStatus = hf.Value
		}
	}
	if !isGRPC {
		st.failWith(nonGRPCStatus(httpStatus, ctErr)) // the body is not gRPC
		return
	}
	st.headers = true
	if !endStream {
		return
	}
	st.trailers = true
	st.code, st.message = codes.Unknown, decodeGRPCMessage(grpcMessage)
	if hasStatus {
		code, err := parseUint32(grpcStatus)
		if err != nil {
			st.failWith(codes.Unknown, fmt.Sprintf("transport: malformed grpc-status: %v", err))
			return
		}
		st.code = codes.Code(code)
	}
}

// nonGRPCStatus is the status of a reply whose headers are not gRPC's:
// the HTTP status mapped as gRPC's HTTP-to-status table maps it.
func nonGRPCStatus(httpStatus, ctErr string) (codes.Code, string) {
	if httpStatus == "" {
		return codes.Internal, "malformed header: missing HTTP status; " + ctErr
	}
	n, err := parseUint32(httpStatus)
	if err != nil {
		return codes.Internal, fmt.Sprintf("transport: malformed http-status: %v", err)
	}
	code, ok := map[uint32]codes.Code{
		400: codes.Internal, 401: codes.Unauthenticated, 403: codes.PermissionDenied,
		404: codes.Unimplemented, 429: codes.Unavailable, 502: codes.Unavailable,
		503: codes.Unavailable, 504: codes.Unavailable,
	}[n]
	if !ok {
		code = codes.Unknown
	}
	msg := fmt.Sprintf("unexpected HTTP status code received from server: %d (%s)", n, http.StatusText(int(n)))
	if ctErr != "" {
		msg += "; " + ctErr
	}
	return code, msg
}

func parseUint32(s string) (uint32, error) {
	if s == "" || len(s) > 10 {
		return 0, fmt.Errorf("invalid number %q", truncate(s, 16))
	}
	var v uint64
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("invalid number %q", truncate(s, 16))
		}
		v = v*10 + uint64(s[i]-'0')
	}
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("number %s out of range", s)
	}
	return uint32(v), nil
}

// isGRPCContentType accepts application/grpc with an optional +subtype or
// ;parameters.
func isGRPCContentType(v string) bool {
	const base = "application/grpc"
	if len(v) < len(base) || !asciiEqualFold([]byte(v[:len(base)]), base) {
		return false
	}
	return len(v) == len(base) || v[len(base)] == '+' || v[len(base)] == ';'
}

// decodeGRPCMessage undoes grpc-message's percent-encoding; a % not
// followed by two hex digits stays as it is.
func decodeGRPCMessage(s string) string {
	if !bytes.ContainsRune([]byte(s), '%') {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				out = append(out, hi<<4|lo)
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// h2Code maps an HTTP/2 error code to the status grpc-go gives it.
func h2Code(c http2.ErrCode) codes.Code {
	switch c {
	case http2.ErrCodeFlowControl, http2.ErrCodeEnhanceYourCalm:
		return codes.ResourceExhausted
	case http2.ErrCodeRefusedStream:
		return codes.Unavailable
	case http2.ErrCodeCancel:
		return codes.Canceled
	case http2.ErrCodeInadequateSecurity:
		return codes.PermissionDenied
	case http2.ErrCodeNo, http2.ErrCodeProtocol, http2.ErrCodeInternal, http2.ErrCodeSettingsTimeout,
		http2.ErrCodeStreamClosed, http2.ErrCodeFrameSize, http2.ErrCodeCompression,
		http2.ErrCodeConnect, http2.ErrCodeHTTP11Required:
		return codes.Internal
	}
	return codes.Unknown
}

// status is the call's outcome as a gRPC status error, nil for OK.
func (st *h2stream) status(deadline time.Time) error {
	switch {
	case st.refused && st.rst == nil:
		return status.Error(codes.Unavailable, "the server refused the stream (GOAWAY) twice")
	case st.rst != nil:
		code := h2Code(*st.rst)
		if code == codes.Canceled && !deadline.IsZero() && !time.Now().Before(deadline) {
			code = codes.DeadlineExceeded // the server gave up at our deadline
		}
		return status.Errorf(code, "stream terminated by RST_STREAM with error code: %v", *st.rst)
	case st.fail != nil:
		return st.fail.Err()
	case !st.trailers:
		return status.Error(codes.Internal, "server closed the stream without sending trailers")
	case st.code != codes.OK:
		return status.Error(st.code, st.message)
	case st.msgLen < 0 && len(st.msg) == 0:
		return status.Error(codes.Internal, "cardinality violation: received no response message from non-server-streaming RPC")
	case int64(len(st.msg)) != 5+st.msgLen:
		return status.Errorf(codes.Internal, "grpc: reply message truncated: %d of %d bytes", max(len(st.msg)-5, 0), max(st.msgLen, 0))
	}
	return nil
}

// decode unmarshals the reply message, decompressing it when the server
// compressed it with an encoding this process has registered (and so
// advertised in grpc-accept-encoding).
func (st *h2stream) decode() (*pb.ModelInferResponse, error) {
	body := st.msg[5:]
	switch st.msg[0] {
	case 0:
	case 1:
		if st.encoding == "" || st.encoding == "identity" {
			return nil, status.Error(codes.Internal, "grpc: compressed flag set with identity or empty encoding")
		}
		comp := encoding.GetCompressor(st.encoding)
		if comp == nil {
			return nil, status.Errorf(codes.Internal, "grpc: Decompressor is not installed for grpc-encoding %q", st.encoding)
		}
		var err error
		if body, err = decompress(comp, body); err != nil {
			return nil, err
		}
	default:
		return nil, status.Errorf(codes.Internal, "grpc: received unexpected payload format %d", st.msg[0])
	}
	r := &pb.ModelInferResponse{}
	if err := proto.Unmarshal(body, r); err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return r, nil
}

func decompress(comp encoding.Compressor, body []byte) ([]byte, error) {
	zr, err := comp.Decompress(bytes.NewReader(body))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(zr, grpcMaxMsg+1))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	if n > grpcMaxMsg {
		return nil, status.Errorf(codes.ResourceExhausted, "grpc: received message after decompression larger than max %d", grpcMaxMsg)
	}
	return out.Bytes(), nil
}
