package client

import (
	"testing"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Triton answers an empty binary output as plain JSON with
// binary_data_size 0 and no Inference-Header-Content-Length.
func TestDecodeInferReplyZeroByteBinaryOutput(t *testing.T) {
	body := []byte(`{"model_name":"identity_fp32","outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,0],"parameters":{"binary_data_size":0}}]}`)
	out, err := decodeInferReply("", body, &InferRequest{Model: "identity_fp32"}, nil)
	if err != nil {
		t.Fatalf("decoding a zero-byte binary output: %v", err)
	}
	if len(out.Outputs) != 1 || out.Outputs[0].Raw == nil || len(out.Outputs[0].Raw) != 0 || out.Outputs[0].DataType != tensor.FP32 {
		t.Fatalf("want one empty FP32 output, got %+v", out.Outputs)
	}
}
