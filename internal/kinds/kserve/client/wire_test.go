package client

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
)

type captured struct {
	header http.Header
	body   []byte
}

func captureServer(t *testing.T) (*httptest.Server, chan captured) {
	ch := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- captured{r.Header.Clone(), b}
		w.Write([]byte(`{"model_name":"m","model_version":"1","outputs":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func TestHTTPRequestBytes(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		req        *InferRequest
		wantJSON   string
		wantBinary []byte
	}{
		{
			name: "binary inputs, all outputs binary",
			req: &InferRequest{Model: "m", ID: "x\"1", Parameters: map[string]any{"sequence_id": int64(7), "sequence_start": true},
				Inputs: []Input{
					{Tensor: tensor.Tensor{Name: "a", DataType: tensor.UINT32, Shape: []int64{2, 2}, Raw: tensor.EncodeInt32s([]int32{1, 2, 3, 4})}},
					{Tensor: tensor.Tensor{Name: "b", DataType: tensor.BOOL, Shape: []int64{3}, Raw: []byte{1, 0, 1}}},
				}},
			wantJSON: `{"id":"x\"1","parameters":{"binary_data_output":true,"sequence_id":7,"sequence_start":true},"inputs":[` +
				`{"name":"a","shape":[2,2],"datatype":"UINT32","parameters":{"binary_data_size":16}},` +
				`{"name":"b","shape":[3],"datatype":"BOOL","parameters":{"binary_data_size":3}}]}`,
			wantBinary: []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1, 0, 1},
		},
		{
			name: "json tensors, shm output",
			opts: Options{JSONTensors: true},
			req: &InferRequest{Model: "m",
				Inputs: []Input{
					{Tensor: tensor.Tensor{Name: "a", DataType: tensor.FP32, Shape: []int64{2}, Raw: tensor.EncodeFloat32s([]float32{0.5, 2})}},
					{Tensor: tensor.Tensor{Name: "h", DataType: tensor.FP16, Shape: []int64{1}, Raw: []byte{0, 0x3c}}},
					{Tensor: tensor.Tensor{Name: "s", DataType: tensor.INT32, Shape: []int64{4}}, Shm: &ShmRef{Region: "r", Offset: 8, ByteSize: 16}},
				},
				Outputs: []RequestedOutput{{Name: "o", Shm: &ShmRef{Region: "out", ByteSize: 4}}, {Name: "p"}}},
			wantJSON: `{"inputs":[` +
				`{"name":"a","shape":[2],"datatype":"FP32","data":[0.5,2]},` +
				`{"name":"h","shape":[1],"datatype":"FP16","parameters":{"binary_data_size":2}},` +
				`{"name":"s","shape":[4],"datatype":"INT32","parameters":{"shared_memory_region":"r","shared_memory_offset":8,"shared_memory_byte_size":16}}],` +
				`"outputs":[{"name":"o","parameters":{"shared_memory_region":"out","shared_memory_offset":0,"shared_memory_byte_size":4,"binary_data":false}},` +
				`{"name":"p","parameters":{"binary_data":false}}]}`,
			wantBinary: []byte{0, 0x3c},
		},
		{
			// A server without the binary extension: every tensor in JSON,
			// FP16 included, and no binary-data parameter anywhere.
			name: "no binary extension",
			opts: Options{NoBinaryTensors: true},
			req: &InferRequest{Model: "m",
				Inputs: []Input{
					{Tensor: tensor.Tensor{Name: "a", DataType: tensor.FP32, Shape: []int64{2}, Raw: tensor.EncodeFloat32s([]float32{0.5, 2})}},
					{Tensor: tensor.Tensor{Name: "h", DataType: tensor.FP16, Shape: []int64{2}, Raw: []byte{0, 0x3c, 0, 0xc0}}},
				},
				Outputs: []RequestedOutput{{Name: "p"}, {Name: "q"}}},
			wantJSON: `{"inputs":[` +
				`{"name":"a","shape":[2],"datatype":"FP32","data":[0.5,2]},` +
				`{"name":"h","shape":[2],"datatype":"FP16","data":[1,-2]}],` +
				`"outputs":[{"name":"p"},{"name":"q"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, ch := captureServer(t)
			opts := tc.opts
			opts.Protocol, opts.URL = "http", srv.URL
			c := newClient(t, opts)
			if _, err := c.Infer(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			got := <-ch
			wantHL, want := strconv.Itoa(len(tc.wantJSON)), kservev2.EncodeBinaryBody([]byte(tc.wantJSON), tc.wantBinary)
			if tc.wantBinary == nil {
				wantHL, want = "", []byte(tc.wantJSON)
			}
			if hl := got.header.Get(kservev2.HeaderContentLength); hl != wantHL {
				t.Errorf("%s = %q, want %q", kservev2.HeaderContentLength, hl, wantHL)
			}
			if !bytes.Equal(got.body, want) {
				t.Errorf("body\n got %q\nwant %q", got.body, want)
			}
		})
	}
}
