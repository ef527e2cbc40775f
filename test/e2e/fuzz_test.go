package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/runner/result"
)

// FuzzBinaryBodyRoundTrip is the encoding direction of the binary tensor
// extension: any tensors, some sent as JSON and some as binary, encoded
// into one body, must split and slice back to exactly the bytes sent, with
// the header length the receiver would read from the HTTP header.
func FuzzBinaryBodyRoundTrip(f *testing.F) {
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08"), []byte{4, 0, 4}, "OUTPUT0")
	f.Add([]byte{}, []byte{0, 0}, "")
	f.Add([]byte("abc"), []byte{255, 3}, "x\"y")
	f.Fuzz(func(t *testing.T, blob, sizes []byte, name string) {
		// Each size byte cuts the next tensor from blob; 255 marks a
		// tensor sent as JSON (no binary part).
		var outs []kservev2.InferOutput
		var parts [][]byte
		off := 0
		for i, s := range sizes {
			out := kservev2.InferOutput{Name: name + strconv.Itoa(i), DataType: tensor.UINT8, Shape: []int64{0}}
			if s == 255 {
				out.Data = json.RawMessage("[]")
				outs = append(outs, out)
				parts = append(parts, nil)
				continue
			}
			n := min(int(s), len(blob)-off)
			out.Shape = []int64{int64(n)}
			out.Parameters = kservev2.Parameters{"binary_data_size": n}
			outs = append(outs, out)
			parts = append(parts, blob[off:off+n])
			off += n
		}
		header, err := json.Marshal(kservev2.InferResponse{ModelName: "m", Outputs: outs})
		if err != nil {
			t.Skip(err) // names that are not valid UTF-8 are the caller's problem
		}
		body := kservev2.EncodeBinaryBody(header, parts...)
		hl, err := kservev2.ParseHeaderLength(strconv.Itoa(len(header)), len(body))
		if err != nil {
			t.Fatalf("header length %d refused for a %d-byte body: %v", len(header), len(body), err)
		}
		gotHeader, rest, err := kservev2.SplitBinaryBody(body, hl)
		if err != nil {
			t.Fatal(err)
		}
		var resp kservev2.InferResponse
		if err := json.Unmarshal(gotHeader, &resp); err != nil {
			t.Fatalf("header does not decode: %v\n%s", err, gotHeader)
		}
		got, err := kservev2.SliceOutputs(resp.Outputs, rest)
		if err != nil {
			t.Fatalf("slicing what was encoded: %v", err)
		}
		if len(got) != len(parts) {
			t.Fatalf("%d tensors back, %d sent", len(got), len(parts))
		}
		for i := range parts {
			if (got[i] == nil) != (parts[i] == nil) || !bytes.Equal(got[i], parts[i]) {
				t.Fatalf("tensor %d: got %q, sent %q", i, got[i], parts[i])
			}
		}
	})
}

// FuzzResultDecode feeds arbitrary documents to the result reader: it must
// refuse or accept without panicking, and what it accepts must encode and
// decode again to the same document.
func FuzzResultDecode(f *testing.F) {
	for _, p := range []string{"testdata/result.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema_version": 1, "scenario": "x", "source": "perfscen", "status": "complete", "points": []}`))
	f.Add([]byte(`{"schema_version": 2}`))
	f.Add([]byte(`{"schema_version": 0}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := result.Decode("fuzz.json", doc)
		if err != nil {
			return
		}
		enc, err := result.Encode(r)
		if err != nil {
			return // values JSON cannot carry (NaN) are refused on the way out
		}
		again, err := result.Decode("again.json", enc)
		if err != nil {
			t.Fatalf("a document the reader accepted does not read back after encoding: %v\n%s", err, enc)
		}
		enc2, err := result.Encode(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", enc, enc2)
		}
	})
}
