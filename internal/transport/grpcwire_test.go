package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestEncodeGRPCTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Nanosecond:                        "1n",
		99999999 * time.Nanosecond:             "99999999n",
		100 * time.Millisecond:                 "100000u",
		10 * time.Second:                       "10000000u",
		100 * time.Second:                      "100000m",
		100000*time.Second + 1:                 "100001S",
		1000 * time.Hour:                       "3600000S",
		100000 * time.Hour:                     "6000000M",
		time.Duration(1<<63 - 1):               "2562048H",
		150*time.Millisecond + time.Nanosecond: "150001u",
	} {
		if got := encodeGRPCTimeout(d); got != want {
			t.Errorf("encodeGRPCTimeout(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDecodeGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		"plain":          "plain",
		"100%25 done":    "100% done",
		"%E2%9C%93":      "✓",
		"bad %zz and %4": "bad %zz and %4",
		"trailing %":     "trailing %",
		"%41%42C":        "ABC",
	} {
		if got := decodeGRPCMessage(in); got != want {
			t.Errorf("decodeGRPCMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// GRPCError sorts statuses as the engine counts them.
func TestGRPCError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	te := &TransportError{Protocol: "grpc", Op: "x", Err: errors.New("reset")}
	for name, tc := range map[string]struct {
		ctx       context.Context
		err       error
		transport bool
		code      codes.Code
	}{
		"server status":     {context.Background(), status.Error(codes.InvalidArgument, "no"), false, codes.InvalidArgument},
		"unavailable":       {context.Background(), status.Error(codes.Unavailable, "down"), true, 0},
		"deadline":          {context.Background(), status.Error(codes.DeadlineExceeded, "late"), true, 0},
		"cancelled by us":   {cancelled, status.Error(codes.Canceled, "c"), true, 0},
		"cancelled by them": {context.Background(), status.Error(codes.Canceled, "c"), false, codes.Canceled},
		"not a status":      {context.Background(), errors.New("plain"), true, 0},
		"a transport error": {context.Background(), te, true, 0},
	} {
		err := GRPCError(tc.ctx, "op", tc.err)
		var se *ServerError
		switch {
		case tc.transport && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s: %v is not a transport error", name, err)
		case !tc.transport && (!errors.As(err, &se) || se.GRPCCode != tc.code):
			t.Errorf("%s: %v, want a server error %v", name, err, tc.code)
		}
	}
	if GRPCError(context.Background(), "op", te) != te {
		t.Error("a transport error was wrapped again")
	}
}

func TestGRPCMetadata(t *testing.T) {
	md, ok := GRPCMetadata(map[string]string{"B": "2", "a": "1", "te": "x", "k-bin": "\xff"})
	if !ok || len(md) != 3 || md[0].Name != "a" || md[1].Name != "b" || md[2].Name != "k-bin" || md[2].Value != "/w" {
		t.Fatalf("got %v %v", md, ok)
	}
	for _, bad := range []map[string]string{{"x y": "1"}, {"k": "a\nb"}, {"": "v"}} {
		if _, ok := GRPCMetadata(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}
