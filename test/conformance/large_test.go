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
	for _, k := range transports {
		for _, gzip := range []bool{false, true} {
			if gzip && k.proto != "http" {
				continue
			}
			// gRPC inputs exceed the server's 64 KiB stream window: the
			// caller's own connection must wait for its WINDOW_UPDATEs.
			_, infer := connect(t, s, k, func(o *client.Options) { o.Gzip = gzip })
			alternate(t, infer, k.String(), gzip)
		}
	}
}

// alternate sends large and small inputs in turn and checks each echo.
func alternate(t *testing.T, infer inferFunc, name string, gzip bool) {
	for i, n := range []int{150528, 16, 150528, 300000, 7} {
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(i*1000 + j%977)
		}
		raw := tensor.EncodeFloat32s(v)
		resp, err := infer(ctxT(t), &client.InferRequest{Model: "identity_fp32",
			Inputs: []client.Input{input("INPUT0", tensor.FP32, []int64{1, int64(n)}, raw)}})
		if err != nil {
			t.Fatalf("%s gzip=%v, request %d (%d floats): %v", name, gzip, i, n, err)
		}
		out, ok := resp.Output("OUTPUT0")
		if !ok || !bytes.Equal(out.Raw, raw) {
			t.Fatalf("%s gzip=%v, request %d (%d floats): output differs from input", name, gzip, i, n)
		}
	}
}
