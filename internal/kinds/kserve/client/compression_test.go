package client

import (
	"context"
	"slices"
	"testing"
)

// perf_analyzer's --grpc-compression-algorithm: every Infer request goes
// compressed, named in grpc-encoding, on grpc-go's connections and on the
// caller's own alike, and the server decodes it to the same request.
func TestGRPCCompression(t *testing.T) {
	const method = "/inference.GRPCInferenceService/ModelInfer"
	for _, comp := range []string{"gzip", "deflate"} {
		for _, own := range []bool{false, true} {
			fg, addr := newFakeGRPC(t)
			v := variant{name: comp, opts: Options{Protocol: "grpc", URL: addr, GRPCCompression: comp}, own: own}
			infer := inferer(t, v, newClient(t, v.opts))
			for i := range 3 {
				resp, err := infer(context.Background(), simpleRequest("c"))
				if err != nil {
					t.Fatalf("%s (own %v) call %d: %v", comp, own, i, err)
				}
				if len(resp.Outputs) != 2 {
					t.Fatalf("%s (own %v): %d outputs", comp, own, len(resp.Outputs))
				}
			}
			if got := fg.seen.of(method); !slices.Equal(got, []string{comp, comp, comp}) {
				t.Errorf("%s (own %v): the server read grpc-encoding %q", comp, own, got)
			}
		}
	}
	// Uncompressed by default.
	fg, addr := newFakeGRPC(t)
	v := variant{name: "plain", opts: Options{Protocol: "grpc", URL: addr}, own: true}
	if _, err := inferer(t, v, newClient(t, v.opts))(context.Background(), simpleRequest("p")); err != nil {
		t.Fatal(err)
	}
	if got := fg.seen.of(method); !slices.Equal(got, []string{""}) {
		t.Errorf("without compression the server read grpc-encoding %q", got)
	}
	if _, err := New(context.Background(), Options{Protocol: "grpc", URL: addr, GRPCCompression: "brotli"}); err == nil {
		t.Error("an unknown compressor was accepted")
	}
}
