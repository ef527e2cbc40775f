package transport

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// h2stream is what one call has learned of its stream.
type h2stream struct {
	id         uint32
	sendWindow int64
	unacked    uint32    // received on this stream, not yet returned
	seen       bool      // some frame of this stream arrived
	first      time.Time // the reply's first HEADERS frame arrived
	headers    bool      // response headers (or trailers-only) arrived
	encoding   string
	msg        []byte // the reply message with its prefix, reused
	msgLen     int64  // declared length; -1 until the prefix is in
	maxMsg     int64  // the largest message accepted
	done       bool   // nothing more will come for this stream
	ended      bool   // done with END_STREAM, not RST_STREAM or GOAWAY
	trailers   bool   // a status arrived
	code       codes.Code
	message    string
	fail       *status.Status // failure found while reading, before trailers
	rst        *http2.ErrCode
	refused    bool // not processed by the server: safe to send again
}

// data appends a DATA frame's payload to the reply message.
func (st *h2stream) data(p []byte) {
	if dst := st.room(len(p)); dst != nil {
		copy(dst, p)
		st.took()
	}
}

// room extends the reply message by n bytes for a DATA payload and
// returns them to be filled, or nil when the payload is to be dropped:
// nothing to take, the call already failed, or the payload breaks the
// unary call's one message (the failure is recorded).
func (st *h2stream) room(n int) []byte {
	if st.fail != nil || n == 0 {
		return nil
	}
	if !st.headers {
		st.failWith(codes.Internal, "DATA frame before response headers")
		return nil
	}
	k := len(st.msg)
	if st.msgLen >= 0 && int64(k)+int64(n) > 5+st.msgLen {
		st.failWith(codes.Internal, errCardinality)
		return nil
	}
	st.msg = slices.Grow(st.msg, n)[:k+n]
	return st.msg[k:]
}

const errCardinality = "cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message"

// eagerMsg is the largest declared message length allocated before its
// bytes arrive; past it the message grows as they do, so a length the
// server does not send costs no more than what it sends.
const eagerMsg = 64 << 20

// took checks the message once a payload is in: its declared length,
// when the prefix is complete, against the limit and the bytes received.
func (st *h2stream) took() {
	if st.msgLen >= 0 || len(st.msg) < 5 {
		return
	}
	st.msgLen = int64(st.msg[1])<<24 | int64(st.msg[2])<<16 | int64(st.msg[3])<<8 | int64(st.msg[4])
	if st.msgLen > st.maxMsg {
		st.failWith(codes.ResourceExhausted, fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", st.msgLen, st.maxMsg))
		return
	}
	if int64(len(st.msg)) > 5+st.msgLen {
		st.failWith(codes.Internal, errCardinality)
		return
	}
	if want := 5 + st.msgLen; int64(cap(st.msg)) < want && st.msgLen <= eagerMsg {
		st.msg = slices.Grow(st.msg, int(want)-len(st.msg))
	}
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

// replyMessage returns the reply message, decompressed when the server
// compressed it with an encoding this process has registered (and so
// advertised in grpc-accept-encoding).
func (st *h2stream) replyMessage() ([]byte, error) {
	body := st.msg[5:]
	switch st.msg[0] {
	case 0:
		return body, nil
	case 1:
		if st.encoding == "" || st.encoding == "identity" {
			return nil, status.Error(codes.Internal, "grpc: compressed flag set with identity or empty encoding")
		}
		comp := encoding.GetCompressor(st.encoding)
		if comp == nil {
			return nil, status.Errorf(codes.Internal, "grpc: Decompressor is not installed for grpc-encoding %q", st.encoding)
		}
		return decompress(comp, body, st.maxMsg)
	}
	return nil, status.Errorf(codes.Internal, "grpc: received unexpected payload format %d", st.msg[0])
}

func decompress(comp encoding.Compressor, body []byte, maxMsg int64) ([]byte, error) {
	zr, err := comp.Decompress(bytes.NewReader(body))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(zr, maxMsg+1))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to decompress the received message: %v", err)
	}
	if n > maxMsg {
		return nil, status.Errorf(codes.ResourceExhausted, "grpc: received message after decompression larger than max %d", maxMsg)
	}
	return out.Bytes(), nil
}
