package conformance

import (
	"bytes"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

// Large inputs travel from their own memory rather than copied behind the
// header; small ones are one contiguous body. Alternate both on one client
// so a pooled request never carries the other's parts.
func TestLargeAndSmallInputsAlternate(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"identity_fp32"}})
	for _, v := range []struct {
		proto string
		gzip  bool
	}{{"http", false}, {"http", true}, {"grpc", false}} {
		proto, gzip := v.proto, v.gzip
		infer := newClient(t, s, proto, func(o *client.Options) { o.Gzip = gzip }).Infer
		if proto == "grpc" {
			// The inputs exceed the server's 64 KiB stream window: the
			// caller's own connection must wait for its WINDOW_UPDATEs.
			infer = ownConn(t, s, proto)
		}
		for i, n := range []int{150528, 16, 150528, 300000, 7} {
			v := make([]float32, n)
			for j := range v {
				v[j] = float32(i*1000 + j%977)
			}
			raw := tensor.EncodeFloat32s(v)
			resp, err := infer(ctxT(t), &client.InferRequest{Model: "identity_fp32",
				Inputs: []client.Input{input("INPUT0", tensor.FP32, []int64{1, int64(n)}, raw)}})
			if err != nil {
				t.Fatalf("%s gzip=%v, request %d (%d floats): %v", proto, gzip, i, n, err)
			}
			out, ok := resp.Output("OUTPUT0")
			if !ok || !bytes.Equal(out.Raw, raw) {
				t.Fatalf("%s gzip=%v, request %d (%d floats): output differs from input", proto, gzip, i, n)
			}
		}
	}
}
