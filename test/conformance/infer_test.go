package conformance

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds/kserve/client"
	"github.com/perfscen/perfscen/internal/refserver"
	"github.com/perfscen/perfscen/internal/tensor"
)

func input(name string, dt tensor.DataType, shape []int64, raw []byte) client.Input {
	return client.Input{Tensor: tensor.Tensor{Name: name, DataType: dt, Shape: shape, Raw: raw}}
}

func mlpInput(batch int) []byte {
	v := make([]float32, batch*256)
	for i := range v {
		v[i] = float32(math.Sin(float64(i)))
	}
	return tensor.EncodeFloat32s(v)
}

// The same request over HTTP (binary and JSON tensors) and gRPC must give
// identical tensors.
func TestSameTensorsAcrossProtocols(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple", "identity_fp32", "identity_bytes", "identity_int32", "mlp_reference", "mlp_optimized"}})
	reqs := []*client.InferRequest{
		{Model: "simple", Inputs: []client.Input{
			input("INPUT0", tensor.INT32, []int64{1, 16}, i32(seq(16, func(i int) int32 { return int32(i) })...)),
			input("INPUT1", tensor.INT32, []int64{1, 16}, i32(seq(16, func(int) int32 { return -1 })...)),
		}},
		{Model: "identity_fp32", Inputs: []client.Input{input("INPUT0", tensor.FP32, []int64{2, 3}, tensor.EncodeFloat32s([]float32{0.5, -1, 3.25, 1e-3, 7, 0}))}},
		{Model: "identity_int32", Inputs: []client.Input{input("INPUT0", tensor.INT32, []int64{1, 2}, i32(math.MaxInt32, math.MinInt32))}},
		{Model: "identity_bytes", Inputs: []client.Input{input("INPUT0", tensor.BYTES, []int64{1, 3},
			tensor.EncodeBytesElements([][]byte{[]byte("a"), {}, []byte("héllo")}))}},
		{Model: "mlp_reference", Inputs: []client.Input{input("INPUT0", tensor.FP32, []int64{3, 256}, mlpInput(3))}},
	}
	variants := []struct {
		name  string
		proto string
		own   bool // a connection of the caller's own, as the runner's workers use
		mod   func(*client.Options)
	}{
		{"http-binary", "http", false, func(*client.Options) {}},
		{"http-json", "http", false, func(o *client.Options) { o.JSONTensors = true }},
		{"http-gzip", "http", false, func(o *client.Options) { o.Gzip = true }},
		{"http-own", "http", true, func(*client.Options) {}},
		{"grpc", "grpc", false, func(*client.Options) {}},
		{"grpc-own", "grpc", true, func(*client.Options) {}},
	}
	for _, req := range reqs {
		var first []tensor.Tensor
		for _, v := range variants {
			infer := newClient(t, s, v.proto, v.mod).Infer
			if v.own {
				infer = ownConn(t, s, v.proto, v.mod)
			}
			resp, err := infer(ctxT(t), req)
			if err != nil {
				t.Fatalf("%s %s: %v", req.Model, v.name, err)
			}
			if first == nil {
				first = resp.Outputs
				continue
			}
			if !sameTensors(first, resp.Outputs) {
				t.Errorf("%s: %s gave %+v, first variant %+v", req.Model, v.name, resp.Outputs, first)
			}
		}
	}
}

func sameTensors(a, b []tensor.Tensor) bool {
	return slices.EqualFunc(a, b, func(x, y tensor.Tensor) bool {
		return x.Name == y.Name && x.DataType == y.DataType && slices.Equal(x.Shape, y.Shape) && bytes.Equal(x.Raw, y.Raw)
	})
}

// Both mlp engines compute the same function within 1e-4 relative.
func TestMLPEnginesAgreeOverTheWire(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"mlp_reference", "mlp_optimized"}})
	c := newClient(t, s, "grpc")
	var outs [][]float32
	for _, m := range []string{"mlp_reference", "mlp_optimized"} {
		resp, err := c.Infer(ctxT(t), &client.InferRequest{Model: m, Inputs: []client.Input{input("INPUT0", tensor.FP32, []int64{5, 256}, mlpInput(5))}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := tensor.DecodeFloat32s(resp.Outputs[0].Raw)
		if err != nil || len(v) != 5*256 {
			t.Fatalf("%s: %d values, %v", m, len(v), err)
		}
		outs = append(outs, v)
	}
	for i := range outs[0] {
		if d := math.Abs(float64(outs[0][i] - outs[1][i])); d > 1e-4*math.Max(1, math.Abs(float64(outs[0][i]))) {
			t.Fatalf("element %d: %v vs %v", i, outs[0][i], outs[1][i])
		}
	}
}
