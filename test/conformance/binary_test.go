package conformance

import (
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/refserver"
)

// Byte-exact exchanges in the binary tensor data extension's layout
// (protocol.md §2): JSON header, then each binary tensor in order, with
// Inference-Header-Content-Length giving the JSON length.
func TestBinaryExtensionByteExact(t *testing.T) {
	s := start(t, refserver.Options{Models: []string{"simple", "identity_int32", "identity_bytes"}})
	for _, tc := range []struct {
		name, path           string
		header               string
		binary               []byte
		wantHeader           string
		wantBinary           []byte
		wantHeaderLenPresent bool
	}{
		{
			name: "two binary inputs, binary and JSON outputs", path: "/v2/models/simple/infer",
			header: `{"id":"42","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},` +
				`{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],` +
				`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1","parameters":{"binary_data":false}}]}`,
			binary: append(i32(seq(16, func(i int) int32 { return int32(i) })...), i32(seq(16, func(int) int32 { return 2 })...)...),
			wantHeader: `{"id":"42","model_name":"simple","model_version":"1","outputs":[` +
				`{"name":"OUTPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},` +
				`{"name":"OUTPUT1","shape":[1,16],"datatype":"INT32","data":[-2,-1,0,1,2,3,4,5,6,7,8,9,10,11,12,13]}]}`,
			wantBinary:           i32(seq(16, func(i int) int32 { return int32(i + 2) })...),
			wantHeaderLenPresent: true,
		},
		{
			name: "BYTES with length prefixes", path: "/v2/models/identity_bytes/infer",
			header:               `{"inputs":[{"name":"INPUT0","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":11}}],"parameters":{"binary_data_output":true}}`,
			binary:               []byte("\x02\x00\x00\x00hi\x01\x00\x00\x00!"),
			wantHeader:           `{"model_name":"identity_bytes","model_version":"1","outputs":[{"name":"OUTPUT0","shape":[1,2],"datatype":"BYTES","parameters":{"binary_data_size":11}}]}`,
			wantBinary:           []byte("\x02\x00\x00\x00hi\x01\x00\x00\x00!"),
			wantHeaderLenPresent: true,
		},
		{
			// A zero-byte binary output adds no buffer, so the reply is plain JSON.
			name: "empty binary output", path: "/v2/models/identity_int32/infer",
			header:     `{"inputs":[{"name":"INPUT0","shape":[1,0],"datatype":"INT32","parameters":{"binary_data_size":0}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`,
			wantHeader: `{"model_name":"identity_int32","model_version":"1","outputs":[{"name":"OUTPUT0","shape":[1,0],"datatype":"INT32","parameters":{"binary_data_size":0}}]}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := append([]byte(tc.header), tc.binary...)
			rep := post(t, s, tc.path, map[string]string{kservev2.HeaderContentLength: strconv.Itoa(len(tc.header))}, body)
			if rep.status != 200 {
				t.Fatalf("status %d: %s", rep.status, rep.body)
			}
			hl := rep.header.Get(kservev2.HeaderContentLength)
			if (hl != "") != tc.wantHeaderLenPresent {
				t.Fatalf("%s = %q", kservev2.HeaderContentLength, hl)
			}
			want := tc.wantHeader + string(tc.wantBinary)
			if string(rep.body) != want {
				t.Fatalf("body\n got %q\nwant %q", rep.body, want)
			}
			if tc.wantHeaderLenPresent && hl != strconv.Itoa(len(tc.wantHeader)) {
				t.Fatalf("header length %s, want %d", hl, len(tc.wantHeader))
			}
			if ct := rep.header.Get("Content-Type"); tc.wantHeaderLenPresent != (ct == "application/octet-stream") {
				t.Fatalf("Content-Type %q", ct)
			}
		})
	}
}
