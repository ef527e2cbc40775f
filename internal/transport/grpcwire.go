package transport

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/perfscen/perfscen/runner/plan"
)

// GRPCError sorts a failed gRPC call into server-sent errors and transport
// failures. grpc-go reports unreachable servers as UNAVAILABLE, so that
// code counts as a transport failure even when a server sent it; deadline
// and cancellation count as transport failures too. A *TransportError
// passes through as it is.
func GRPCError(ctx context.Context, op string, err error) error {
	if te, ok := err.(*TransportError); ok {
		return te
	}
	st, ok := status.FromError(err)
	if !ok {
		return &TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	}
	switch st.Code() {
	case codes.Unavailable:
		return &TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: err}
	case codes.DeadlineExceeded:
		// gRPC sends the deadline along, and the server may give up a
		// hair before the client's own timer fires: either way the call
		// timed out, as an HTTP call would, and is not a server verdict.
		return &TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("%w (%s)", context.DeadlineExceeded, st.Message())}
	case codes.Canceled:
		if cerr := ctx.Err(); cerr != nil {
			return &TransportError{Protocol: plan.ProtocolGRPC, Op: op, Err: fmt.Errorf("%w (%s)", cerr, st.Message())}
		}
	}
	return &ServerError{Protocol: plan.ProtocolGRPC, Op: op, GRPCCode: st.Code(), Message: st.Message()}
}

// GRPCMetadata returns md as header fields in a fixed order, with keys
// lowercased as gRPC metadata keys are, or false when a key or value
// cannot go on the wire as gRPC metadata (grpc-go's to refuse). Keys the
// transport writes itself are left out, as grpc-go leaves them out.
func GRPCMetadata(md map[string]string) ([]hpack.HeaderField, bool) {
	out := make([]hpack.HeaderField, 0, len(md))
	for k, v := range md {
		k = strings.ToLower(k)
		if !validMDKey(k) {
			return nil, false
		}
		if isReservedGRPCHeader(k) {
			continue
		}
		if strings.HasSuffix(k, "-bin") {
			v = base64.RawStdEncoding.EncodeToString([]byte(v))
		} else if !validMDValue(v) {
			return nil, false
		}
		out = append(out, hpack.HeaderField{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, true
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

// GRPCAcceptEncoding lists the message compressors registered with
// grpc-go in this process (gzip and deflate, compress.go), which grpc-go
// offers servers in grpc-accept-encoding.
func GRPCAcceptEncoding() string {
	var names []string
	for _, n := range []string{"gzip", "deflate"} {
		if encoding.GetCompressor(n) != nil {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// H2TLS is cfg as grpc-go's TLS credentials use it: ALPN "h2" offered,
// TLS 1.2 at least.
func H2TLS(cfg *tls.Config) *tls.Config {
	cfg = cfg.Clone()
	if !slices.Contains(cfg.NextProtos, "h2") {
		cfg.NextProtos = append(cfg.NextProtos, "h2")
	}
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return cfg
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
