package client

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var replyScanCases = []struct {
	name string
	in   string
	fast bool // the scanner must take it; false: it must hand it to encoding/json
}{
	{"binary two outputs", `{"model_name":"simple","model_version":"1","outputs":[` +
		`{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},` +
		`{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`, true},
	{"id first, whitespace", " {\n\t\"id\" : \"r-1\" , \"model_name\":\"m\", \"outputs\" : [ { \"shape\" : [ ] , \"name\":\"o\" } ] }\r\n", true},
	{"empty object", `{}`, true},
	{"empty outputs", `{"outputs":[]}`, true},
	{"empty output and params", `{"outputs":[{},{"parameters":{}}]}`, true},
	{"zero-size binary", `{"outputs":[{"name":"o","datatype":"FP32","shape":[1,0],"parameters":{"binary_data_size":0}}]}`, true},
	{"negative dims", `{"outputs":[{"shape":[-1,-0,0,123456789012345678]}]}`, true},
	{"unknown datatype kept", `{"outputs":[{"datatype":"FP8"}]}`, true},
	{"outputs outgrow their first slice", `{"outputs":[{"parameters":{"binary_data_size":1}},{"parameters":{"binary_data_size":2}},` +
		`{"parameters":{"binary_data_size":3}},{},{"parameters":{"binary_data_size":5}}]}`, true},
	{"nine dims", `{"outputs":[{"shape":[1,2,3,4,5,6,7,8,9]}]}`, true},

	{"json data", `{"outputs":[{"name":"o","datatype":"FP32","shape":[1],"data":[1.5]}]}`, false},
	{"top-level parameters", `{"model_name":"m","parameters":{"sequence_id":1},"outputs":[]}`, true},
	{"triton identity reply", `{"model_name":"identity_fp32","model_version":"1","parameters":{"param0":"an example string parameter","param1":42,"param2":false,"param3":123.123},` +
		`"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`, true},
	{"parameter numbers", `{"parameters":{"a":-0,"b":0.5,"c":1e3,"d":-12.5E-2,"e":123456789012345678901234567890,"f":true, "f" : 7 ,"g":""}}`, true},
	{"empty parameters", `{"parameters":{}}`, true},
	{"null parameters", `{"parameters":null}`, false},
	{"duplicate parameters", `{"parameters":{},"parameters":{}}`, false},
	{"null parameter", `{"parameters":{"a":null}}`, false},
	{"nested parameter", `{"parameters":{"a":{"b":1}}}`, false},
	{"array parameter", `{"parameters":{"a":[1]}}`, false},
	{"escaped parameter", `{"parameters":{"a":"\n"}}`, false},
	{"escaped parameter key", `{"parameters":{"\u0061":1}}`, false},
	{"parameter leading zero", `{"parameters":{"a":01}}`, false},
	{"parameter bare fraction", `{"parameters":{"a":1.}}`, false},
	{"parameter bare exponent", `{"parameters":{"a":1e}}`, false},
	{"parameter plus", `{"parameters":{"a":+1}}`, false},
	{"parameter minus alone", `{"parameters":{"a":-}}`, false},
	{"parameter misspelt", `{"parameters":{"a":tru}}`, false},
	{"parameter word run-on", `{"parameters":{"a":truex}}`, false},
	{"parameters unclosed", `{"parameters":{"a":1`, false},
	{"shm region", `{"outputs":[{"name":"o","parameters":{"shared_memory_region":"r","binary_data_size":4}}]}`, false},
	{"second param", `{"outputs":[{"parameters":{"binary_data_size":4,"x":1}}]}`, false},
	{"escape in name", `{"model_name":"a\"b"}`, false},
	{"non-ascii", `{"model_name":"é"}`, false},
	{"case-folded key", `{"Model_Name":"m"}`, false},
	{"duplicate key", `{"model_name":"a","model_name":"b"}`, false},
	{"duplicate output key", `{"outputs":[{"name":"a","name":"b"}]}`, false},
	{"null string", `{"model_name":null}`, false},
	{"null outputs", `{"outputs":null}`, false},
	{"float dim", `{"outputs":[{"shape":[1.0]}]}`, false},
	{"exponent dim", `{"outputs":[{"shape":[1e2]}]}`, false},
	{"leading zero", `{"outputs":[{"shape":[01]}]}`, false},
	{"huge dim", `{"outputs":[{"shape":[9223372036854775808]}]}`, false},
	{"trailing comma", `{"model_name":"m",}`, false},
	{"trailing data", `{"model_name":"m"} x`, false},
	{"two objects", `{}{}`, false},
	{"truncated", `{"model_name":"m"`, false},
	{"not an object", `[]`, false},
	{"empty input", ``, false},
	{"number as name", `{"model_name":1}`, false},
}

func TestScanReplyHeader(t *testing.T) {
	for _, tc := range replyScanCases {
		t.Run(tc.name, func(t *testing.T) {
			var got reply
			fast := scanReplyHeader([]byte(tc.in), nil, nil, &got)
			if fast != tc.fast {
				t.Fatalf("scanner took it = %v, want %v", fast, tc.fast)
			}
			if fast {
				checkScanMatchesJSON(t, []byte(tc.in), &got)
			}
		})
	}
}

// checkScanMatchesJSON fails unless encoding/json accepts data and decodes
// it into exactly got.
func checkScanMatchesJSON(t *testing.T, data []byte, got *reply) {
	t.Helper()
	for i := range got.Outputs {
		if o := &got.Outputs[i]; o.Parameters.BinaryDataSize != nil && o.Parameters.BinaryDataSize != &o.binSize {
			t.Fatalf("output %d: binary_data_size points outside its output", i)
		}
	}
	var want reply
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("scanner accepted %q, encoding/json rejects it: %v", data, err)
	}
	if d := cmp.Diff(want, *got, cmpopts.IgnoreUnexported(replyOutput{})); d != "" {
		t.Fatalf("scanner and encoding/json disagree on %q (-json +scanner):\n%s", data, d)
	}
}

// Strings equal to the request's are shared, not copied, and the output
// name cache hands back one string per name.
func TestScanReplyHeaderReusesStrings(t *testing.T) {
	req := &InferRequest{Model: "simple", Version: "1", ID: "r-7", Outputs: []RequestedOutput{{Name: "OUTPUT1"}}}
	in := []byte(`{"id":"r-7","model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32"},{"name":"OUTPUT1"}]}`)
	var names nameCache
	var r1, r2 reply
	if !scanReplyHeader(in, req, &names, &r1) || !scanReplyHeader(in, req, &names, &r2) {
		t.Fatal("scanner refused a plain reply")
	}
	same := func(a, b string) bool { return len(a) > 0 && len(a) == len(b) && unsafeData(a) == unsafeData(b) }
	for _, c := range []struct{ what, got, want string }{
		{"id", r1.ID, req.ID}, {"model", r1.ModelName, req.Model}, {"version", r1.ModelVersion, req.Version},
		{"requested output", r1.Outputs[1].Name, req.Outputs[0].Name},
		{"cached output", r2.Outputs[0].Name, r1.Outputs[0].Name},
		{"datatype", string(r1.Outputs[0].DataType), "INT32"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
		if c.what != "datatype" && !same(c.got, c.want) {
			t.Errorf("%s was copied, not reused", c.what)
		}
	}
}

func FuzzDecodeReplyHeader(f *testing.F) {
	for _, tc := range replyScanCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got reply
		if scanReplyHeader(data, nil, nil, &got) {
			checkScanMatchesJSON(t, data, &got)
		}
		// With a request and a name cache the decoded values must not change.
		req := &InferRequest{Model: "simple", Version: "1", ID: "r", Outputs: []RequestedOutput{{Name: "OUTPUT0"}}}
		var names nameCache
		for range 2 {
			var withReq reply
			if scanReplyHeader(data, req, &names, &withReq) {
				checkScanMatchesJSON(t, data, &withReq)
			}
		}
	})
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }
