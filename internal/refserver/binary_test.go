package refserver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
)

func int32Bytes(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// The Python example's request: INPUT0 as JSON, INPUT1 (all -1) binary,
// OUTPUT0 binary and OUTPUT1 JSON.
func TestHTTPBinaryMixed(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	in0 := make([]int32, 16)
	in1 := make([]int32, 16)
	for i := range in0 {
		in0[i], in1[i] = int32(i), -1
	}
	header := mustJSON(t, map[string]any{
		"inputs": []any{
			map[string]any{"name": "INPUT0", "datatype": "INT32", "shape": []int{1, 16}, "data": in0},
			map[string]any{"name": "INPUT1", "datatype": "INT32", "shape": []int{1, 16}, "parameters": map[string]any{"binary_data_size": 64}},
		},
		"outputs": []any{
			map[string]any{"name": "OUTPUT0", "parameters": map[string]any{"binary_data": true}},
			map[string]any{"name": "OUTPUT1", "parameters": map[string]any{"binary_data": false}},
		},
	})
	body := append(append([]byte{}, header...), int32Bytes(in1...)...)
	rep := do(t, s, "POST", "/v2/models/simple/infer", map[string]string{kservev2.HeaderContentLength: strconv.Itoa(len(header))}, body)
	if rep.status != 200 {
		t.Fatalf("status %d: %s", rep.status, rep.body)
	}
	if ct := rep.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	hl, err := strconv.Atoi(rep.header.Get(kservev2.HeaderContentLength))
	if err != nil || hl+64 != len(rep.body) {
		t.Fatalf("header length %q with body %d bytes", rep.header.Get(kservev2.HeaderContentLength), len(rep.body))
	}
	var resp kservev2.InferResponse
	if err := json.Unmarshal(rep.body[:hl], &resp); err != nil {
		t.Fatal(err)
	}
	if sz, _, _ := kservev2.BinaryDataSize(resp.Outputs[0].Parameters); sz != 64 || resp.Outputs[0].Data != nil {
		t.Errorf("OUTPUT0 entry %+v", resp.Outputs[0])
	}
	want0 := make([]int32, 16)
	want1 := make([]int32, 16)
	for i := range want0 {
		want0[i], want1[i] = int32(i-1), int32(i+1)
	}
	if !bytes.Equal(rep.body[hl:], int32Bytes(want0...)) {
		t.Errorf("OUTPUT0 bytes %v", rep.body[hl:])
	}
	var got1 []int32
	if err := json.Unmarshal(resp.Outputs[1].Data, &got1); err != nil || !equalInt32(got1, want1) {
		t.Errorf("OUTPUT1 %s", resp.Outputs[1].Data)
	}
}

func equalInt32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHTTPBinaryOutputDefault(t *testing.T) {
	s := startServer(t, Options{Models: []string{"identity_int32"}})
	body := mustJSON(t, map[string]any{
		"parameters": map[string]any{"binary_data_output": true},
		"inputs":     []any{map[string]any{"name": "INPUT0", "datatype": "INT32", "shape": []int{1, 3}, "data": []int{7, 8, 9}}},
	})
	rep := do(t, s, "POST", "/v2/models/identity_int32/infer", nil, body)
	hl, _ := strconv.Atoi(rep.header.Get(kservev2.HeaderContentLength))
	if rep.status != 200 || hl == 0 || !bytes.Equal(rep.body[hl:], int32Bytes(7, 8, 9)) {
		t.Fatalf("status %d header %d body %q", rep.status, hl, rep.body)
	}
}

func TestHTTPRawBinaryRequest(t *testing.T) {
	s := startServer(t, Options{Models: []string{"identity_int32"}})
	rep := do(t, s, "POST", "/v2/models/identity_int32/infer", map[string]string{kservev2.HeaderContentLength: "0"}, int32Bytes(1, 2, 3, 4))
	hl, _ := strconv.Atoi(rep.header.Get(kservev2.HeaderContentLength))
	if rep.status != 200 || !bytes.Equal(rep.body[hl:], int32Bytes(1, 2, 3, 4)) {
		t.Fatalf("status %d: %q", rep.status, rep.body)
	}
	var resp kservev2.InferResponse
	if err := json.Unmarshal(rep.body[:hl], &resp); err != nil || len(resp.Outputs) != 1 || !equalInt64(resp.Outputs[0].Shape, []int64{1, 4}) {
		t.Fatalf("response header %s (%v)", rep.body[:hl], err)
	}
}

func equalInt64(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHTTPCompression(t *testing.T) {
	s := startServer(t, Options{Models: []string{"simple"}})
	plain := simpleJSONBody(t)
	for _, enc := range []string{"gzip", "deflate"} {
		var buf bytes.Buffer
		var zw io.WriteCloser = gzip.NewWriter(&buf)
		if enc == "deflate" {
			zw = zlib.NewWriter(&buf)
		}
		zw.Write(plain)
		zw.Close()
		rep := do(t, s, "POST", "/v2/models/simple/infer", map[string]string{
			"Content-Encoding": enc, "Accept-Encoding": "identity;q=0.5, " + enc + ";q=0.9",
		}, buf.Bytes())
		if rep.status != 200 || rep.header.Get("Content-Encoding") != enc {
			t.Fatalf("%s: status %d encoding %q", enc, rep.status, rep.header.Get("Content-Encoding"))
		}
		var zr io.Reader
		var err error
		if enc == "gzip" {
			zr, err = gzip.NewReader(bytes.NewReader(rep.body))
		} else {
			zr, err = zlib.NewReader(bytes.NewReader(rep.body))
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil || !bytes.Contains(out, []byte(`"model_name":"simple"`)) {
			t.Fatalf("%s: inflated %q (%v)", enc, out, err)
		}
	}
	rep := do(t, s, "POST", "/v2/models/simple/infer", map[string]string{"Content-Encoding": "br"}, plain)
	if rep.status != http.StatusNotImplemented || rep.header.Get("Accept-Encoding") != "gzip, deflate" {
		t.Fatalf("br: status %d, Accept-Encoding %q", rep.status, rep.header.Get("Accept-Encoding"))
	}
}

func TestResponseEncoding(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "gzip": "gzip", "deflate, gzip;q=0.5": "deflate", "gzip;q=0.1, identity": "",
		"br": "", "gzip;q=0.2, deflate;q=0.8": "deflate",
	} {
		if got := responseEncoding(in); got != want {
			t.Errorf("responseEncoding(%q) = %q, want %q", in, got, want)
		}
	}
}
