//go:build linux

package client

import (
	"testing"

	"github.com/perfscen/perfscen/internal/transport"
)

// The tests of the caller's own connections, run again with every
// connection in blocking mode: the same wire behaviour, timeouts,
// cancellation, TLS, large writes and server closes.
func TestOwnConnsBlocking(t *testing.T) {
	t.Cleanup(transport.ForceBlocking())
	before, _ := transport.BlockingCounts()
	for name, test := range map[string]func(*testing.T){
		"http keep-alive":          TestHTTPConnKeepAlive,
		"http wire":                TestHTTPConnSendsWhatTransportSends,
		"http server closes":       TestHTTPConnServerCloses,
		"http timeout and cancel":  TestHTTPConnTimeoutAndCancel,
		"http gzip and tls":        TestHTTPConnGzipAndTLS,
		"http large inputs":        TestHTTPConnLargeInputs,
		"http malformed replies":   TestHTTPConnMalformedReplies,
		"grpc wire":                TestGRPCConnSendsWhatClientSends,
		"grpc larger than windows": TestGRPCConnLargerThanWindows,
		"grpc error status":        TestGRPCConnErrorStatus,
		"grpc deadline and cancel": TestGRPCConnDeadlineAndCancel,
		"grpc goaway mid-run":      TestGRPCConnGoAwayMidRun,
		"grpc refused streams":     TestGRPCConnRefusedStreams,
		"grpc malformed replies":   TestGRPCConnMalformedReplies,
		"grpc reply before end":    TestGRPCConnReplyBeforeRequestEnds,
		"grpc not http2":           TestGRPCConnNotHTTP2,
		"tls":                      TestTLS,
	} {
		t.Run(name, test)
	}
	if opened, _ := transport.BlockingCounts(); opened == before {
		t.Fatal("no connection was put in blocking mode")
	}
	if _, open := transport.BlockingCounts(); open != 0 {
		t.Errorf("%d blocking connections still open after every connection closed", open)
	}
}
