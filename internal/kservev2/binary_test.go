package kservev2

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/tensor"
)

// The worked example of the binary tensor data extension: inputs UINT32 [2,2]
// (16 bytes) and BOOL [3] (3 bytes); the reply has FP32 [3,2] as 24 binary
// bytes plus a JSON output.
const exampleRequestJSON = `{"model_name":"mymodel","inputs":[` +
	`{"name":"input0","shape":[2,2],"datatype":"UINT32","parameters":{"binary_data_size":16}},` +
	`{"name":"input1","shape":[3],"datatype":"BOOL","parameters":{"binary_data_size":3}}],` +
	`"outputs":[{"name":"output0","parameters":{"binary_data":true}},{"name":"output1"}]}`

const exampleResponseJSON = `{"outputs":[` +
	`{"name":"output0","shape":[3,2],"datatype":"FP32","parameters":{"binary_data_size":24}},` +
	`{"name":"output1","shape":[2,2],"datatype":"UINT32","data":[10,11,12,13]}]}`

func TestBinaryExtensionRequestExample(t *testing.T) {
	in0, _ := tensor.FromInt64s(tensor.UINT32, []int64{1, 2, 3, 4})
	in1, _ := tensor.FromInt64s(tensor.BOOL, []int64{1, 0, 1})
	body := EncodeBinaryBody([]byte(exampleRequestJSON), in0, in1)
	if want := len(exampleRequestJSON) + 19; len(body) != want {
		t.Fatalf("Content-Length %d, want json+19 = %d", len(body), want)
	}
	want := append(append([]byte(exampleRequestJSON),
		1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0), 1, 0, 1)
	if !bytes.Equal(body, want) {
		t.Fatalf("body tail % x", body[len(exampleRequestJSON):])
	}
	hl, err := ParseHeaderLength(strconv.Itoa(len(exampleRequestJSON)), len(body))
	if err != nil {
		t.Fatal(err)
	}
	header, rest, err := SplitBinaryBody(body, hl)
	if err != nil {
		t.Fatal(err)
	}
	var req InferRequest
	if err := json.Unmarshal(header, &req); err != nil {
		t.Fatal(err)
	}
	parts, err := SliceInputs(req.Inputs, rest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(parts[0], in0) || !bytes.Equal(parts[1], in1) {
		t.Fatalf("parts = % x / % x", parts[0], parts[1])
	}
	// A truncated body is an error, never a panic.
	if _, err := SliceInputs(req.Inputs, rest[:18]); err == nil {
		t.Error("SliceInputs accepted a truncated body")
	}
	if _, err := SliceInputs(req.Inputs, append(rest, 0)); err == nil {
		t.Error("SliceInputs accepted trailing bytes")
	}
}

func TestBinaryExtensionResponseExample(t *testing.T) {
	out0 := tensor.EncodeFloat32s([]float32{1, 2, 3, 4, 5, 6})
	body := EncodeBinaryBody([]byte(exampleResponseJSON), out0)
	if len(body) != len(exampleResponseJSON)+24 {
		t.Fatalf("Content-Length %d, want json+24", len(body))
	}
	header, rest, err := SplitBinaryBody(body, len(exampleResponseJSON))
	if err != nil {
		t.Fatal(err)
	}
	var resp InferResponse
	if err := json.Unmarshal(header, &resp); err != nil {
		t.Fatal(err)
	}
	parts, err := SliceOutputs(resp.Outputs, rest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(parts[0], out0) || parts[1] != nil {
		t.Fatalf("parts = % x / %v", parts[0], parts[1])
	}
	o1, err := tensor.FromJSONData("output1", resp.Outputs[1].DataType, resp.Outputs[1].Shape, resp.Outputs[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tensor.ToInt64s(tensor.UINT32, o1.Raw); len(got) != 4 || got[0] != 10 || got[3] != 13 {
		t.Fatalf("output1 = %v", got)
	}
}

func TestParseHeaderLength(t *testing.T) {
	for _, tc := range []struct {
		v       string
		body    int
		want    int
		wantErr bool
	}{
		{"0", 10, 0, false},
		{"10", 10, 10, false},
		{"11", 10, 0, true},
		{"-1", 10, 0, true},
		{"abc", 10, 0, true},
		{"", 10, 0, true},
		{"4294967296", 1 << 40, 0, true},
	} {
		got, err := ParseHeaderLength(tc.v, tc.body)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseHeaderLength(%q, %d) = %d, %v", tc.v, tc.body, got, err)
		}
	}
}

func TestSliceRejectsBadSizes(t *testing.T) {
	for _, params := range []string{`{"binary_data_size":-1}`, `{"binary_data_size":"4"}`, `{"binary_data_size":1.5}`} {
		var p Parameters
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			t.Fatal(err)
		}
		if _, err := SliceInputs([]InferInput{{Name: "x", Parameters: p}}, make([]byte, 4)); err == nil {
			t.Errorf("SliceInputs accepted %s", params)
		}
	}
}

func FuzzSplitBinaryBody(f *testing.F) {
	in0, _ := tensor.FromInt64s(tensor.UINT32, []int64{1, 2, 3, 4})
	f.Add(EncodeBinaryBody([]byte(exampleRequestJSON), in0, []byte{1, 0, 1}), len(exampleRequestJSON))
	f.Add([]byte(exampleRequestJSON), len(exampleRequestJSON)-5)
	f.Add([]byte(`{"inputs":[{"name":"a","parameters":{"binary_data_size":99999999999}}]}`), 60)
	f.Add([]byte{}, -1)
	f.Fuzz(func(t *testing.T, body []byte, headerLen int) {
		header, rest, err := SplitBinaryBody(body, headerLen)
		if err != nil {
			return
		}
		if len(header)+len(rest) != len(body) {
			t.Fatalf("split lost bytes: %d + %d != %d", len(header), len(rest), len(body))
		}
		var req InferRequest
		if json.Unmarshal(header, &req) != nil {
			return
		}
		parts, err := SliceInputs(req.Inputs, rest)
		if err != nil {
			return
		}
		total := 0
		for _, p := range parts {
			total += len(p)
		}
		if total != len(rest) {
			t.Fatalf("parts cover %d of %d bytes", total, len(rest))
		}
	})
}
