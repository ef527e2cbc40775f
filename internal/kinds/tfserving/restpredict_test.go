package tfserving

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/kinds"
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/validate"
)

// exampleTensor is a tensor as testdata/rest_predict_examples.json writes
// it: flat values, strings for BYTES and for non-finite floats.
type exampleTensor struct {
	Name   string            `json:"name"`
	DType  tensor.DataType   `json:"dtype"`
	Shape  []int64           `json:"shape"`
	Values []json.RawMessage `json:"values"`
}

type restExample struct {
	Name      string          `json:"name"`
	Body      string          `json:"body"`
	Format    string          `json:"format"`
	Signature string          `json:"signature"`
	Encode    bool            `json:"encode"`
	Error     string          `json:"error"`
	Inputs    []exampleTensor `json:"inputs"`
	Outputs   []exampleTensor `json:"outputs"`
}

func loadExamples(t *testing.T) (requests, replies []restExample) {
	t.Helper()
	b, err := os.ReadFile("testdata/rest_predict_examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Requests []restExample `json:"requests"`
		Replies  []restExample `json:"replies"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Requests, f.Replies
}

func (e exampleTensor) tensor(t *testing.T) tensor.Tensor {
	t.Helper()
	out := tensor.Tensor{Name: e.Name, DataType: e.DType, Shape: e.Shape}
	if e.DType == tensor.BYTES {
		elems := make([][]byte, len(e.Values))
		for i, v := range e.Values {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				t.Fatalf("%s value %d: %v", e.Name, i, err)
			}
			elems[i] = []byte(s)
		}
		out.Raw = tensor.EncodeBytesElements(elems)
		return out
	}
	f := make([]float64, len(e.Values))
	for i, v := range e.Values {
		var s string
		if json.Unmarshal(v, &s) == nil {
			f[i] = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}[s]
			continue
		}
		if err := json.Unmarshal(v, &f[i]); err != nil {
			t.Fatalf("%s value %d: %v", e.Name, i, err)
		}
	}
	raw, err := tensor.FromFloat64s(e.DType, f)
	if err != nil {
		t.Fatal(err)
	}
	out.Raw = raw
	return out
}

func specsOf(ts []exampleTensor) []tensorSpec {
	out := make([]tensorSpec, len(ts))
	for i, e := range ts {
		out[i] = tensorSpec{Name: e.Name, DataType: e.DType}
	}
	return out
}

// sameTensors compares exactly, NaN equal to NaN: validate's exact rules
// with a zero tolerance, plus names and shapes.
func sameTensors(t *testing.T, what string, got []tensor.Tensor, want []tensor.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d tensors, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.DataType != w.DataType || !reflect.DeepEqual(g.Shape, w.Shape) {
			t.Errorf("%s: tensor %d is %s %s %v, want %s %s %v", what, i, g.Name, g.DataType, g.Shape, w.Name, w.DataType, w.Shape)
			continue
		}
		if string(g.Raw) != string(w.Raw) {
			r := validate.Compare(kinds.Public([]tensor.Tensor{w}), kinds.Public([]tensor.Tensor{g}), validate.Options{})
			t.Errorf("%s: tensor %s values differ: %s", what, w.Name, r.String())
		}
	}
}

// sameJSON compares two bodies as TF Serving reads them: numbers by value,
// objects unordered, non-finite tokens allowed.
func sameJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	g, err := decodeJSON(got)
	if err != nil {
		t.Fatalf("%s: perfscen wrote invalid JSON %s: %v", what, got, err)
	}
	w, err := decodeJSON([]byte(want))
	if err != nil {
		t.Fatalf("%s: example: %v", what, err)
	}
	if !reflect.DeepEqual(normNumbers(g), normNumbers(w)) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func normNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normNumbers(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normNumbers(e)
		}
		return out
	}
	return v
}

// TF Serving's own REST request examples: the embedded flavour reads each
// into the tensors it describes, and perfscen writes those tensors back as
// the same JSON (where the example uses perfscen's spelling: bare values
// for one input in rows, names in columns, no default signature name).
func TestRESTRequestExamples(t *testing.T) {
	requests, _ := loadExamples(t)
	for _, ex := range requests {
		t.Run(ex.Name, func(t *testing.T) {
			want := make([]tensor.Tensor, len(ex.Inputs))
			for i, e := range ex.Inputs {
				want[i] = e.tensor(t)
			}
			body, err := decodePredictBody([]byte(ex.Body), func(sig string) ([]tensorSpec, error) {
				if wantSig := cmpOr(ex.Signature, defaultSignature); sig != wantSig {
					t.Errorf("signature %q, want %q", sig, wantSig)
				}
				return specsOf(ex.Inputs), nil
			})
			if err != nil {
				t.Fatalf("reading the example: %v", err)
			}
			if body.Format != ex.Format {
				t.Errorf("format %s, want %s", body.Format, ex.Format)
			}
			sameTensors(t, "decoded", body.Inputs, want)
			if !ex.Encode {
				return
			}
			got, err := encodePredictBody(ex.Signature, ex.Format, want)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "encoded", got, ex.Body)
		})
	}
}

// TF Serving's REST replies: perfscen reads each into its tensors, and the
// embedded flavour writes those tensors as the same JSON.
func TestRESTReplyExamples(t *testing.T) {
	_, replies := loadExamples(t)
	for _, ex := range replies {
		t.Run(ex.Name, func(t *testing.T) {
			got, err := decodePredictReply([]byte(ex.Body), ex.Format, specsOf(ex.Outputs))
			if ex.Error != "" {
				if err == nil || !strings.Contains(err.Error(), ex.Error) {
					t.Fatalf("err = %v, want one naming %q", err, ex.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]tensor.Tensor, len(ex.Outputs))
			for i, e := range ex.Outputs {
				want[i] = e.tensor(t)
			}
			sameTensors(t, "decoded", got, want)
			if !ex.Encode {
				return
			}
			enc, err := encodePredictReply(ex.Format, want)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "encoded", enc, ex.Body)
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestQuoteNonFinite(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[1, NaN, Infinity, -Infinity]`, `[1, "NaN", "Infinity", "-Infinity"]`},
		{`{"a": "NaN", "b": -Inf, "c": Inf}`, `{"a": "NaN", "b": "-Inf", "c": "Inf"}`},
		{`["say \"NaN\"", NaN]`, `["say \"NaN\"", "NaN"]`},
		{`[NaNa, -3]`, `[NaNa, -3]`},
		{`[1.5e-3]`, `[1.5e-3]`},
	}
	for _, c := range cases {
		if got := string(quoteNonFinite([]byte(c.in))); got != c.want {
			t.Errorf("quoteNonFinite(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Bodies TF Serving would refuse are refused with its words, and replies
// that do not fit the signature name the mismatch.
func TestRESTRefused(t *testing.T) {
	specs := []tensorSpec{{"x", tensor.FP32}, {"y", tensor.INT32}}
	sig := func(string) ([]tensorSpec, error) { return specs, nil }
	for body, want := range map[string]string{
		`{"instances": [], "inputs": {}}`:        "not allowed to mix",
		`{"signature_name": 3, "instances": []}`: "must be a string",
		`{}`:                                     "missing 'inputs' or 'instances'",
		`{"inputs": {"x": [1], "y": [1], "z": [2]}}`:             `tensor "z" is not in the signature`,
		`{"inputs": {"x": [1]}}`:                                 `tensor "y" is missing`,
		`{"inputs": {"x": [[1], [2, 3]], "y": [1]}}`:             "ragged",
		`{"inputs": {"x": [1], "y": [1.5]}}`:                     "1.5 is not an INT32",
		`{"inputs": {"x": ["a"], "y": [1]}}`:                     "a string where a number",
		`{"instances": [{"x": 1, "y": 2}, {"x": 1}]}`:            `tensor "y" is in 1 of 2 entries`,
		`{"instances": [1, 2]}`:                                  "where an object of tensors by name (x, y)",
		`[1]`:                                                    "not an object",
		`{"instances": [1]} x`:                                   "JSON Parse error",
		`{"inputs": {"x": [1], "y": [99999999999]}}`:             "not an INT32",
		`{"inputs": {"x": [{"b64": "AA=="}], "y": [1]}}`:         "an object where a number",
		`{"inputs": {"x": [1], "y": [[1], 2]}}`:                  "nested unevenly",
		`{"instances": [{"x": [1], "y": [1]}, 7]}`:               "entry 1 is the number 7",
		`{"inputs": {"x": [true], "y": [1]}}`:                    "a boolean where a number",
		`{"signature_name": "", "inputs": {"x": [1], "y": [1]}}`: "",
	} {
		_, err := decodePredictBody([]byte(body), sig)
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", body, err, want)
		}
	}
	for body, want := range map[string]string{
		`{"outputs": [1]}`:            "no \"predictions\" (keys: outputs)",
		`{"predictions": 3}`:          "not a list",
		`{"predictions": [{"x": 1}]}`: `tensor "y" is missing`,
		`"x"`:                         "not an object",
		`{"predictions": [1, 2]}`:     "where an object of tensors by name",
		`{"predictions": [{"x": [1], "y": 1}, {"x": [1, 2], "y": 2}]}`: "ragged",
	} {
		if _, err := decodePredictReply([]byte(body), formatRow, specs); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", body, err, want)
		}
	}
}

// Row format cannot carry a scalar or inputs of different first
// dimensions; the message names the way out.
func TestRowFormatLimits(t *testing.T) {
	f32 := func(name string, shape ...int64) tensor.Tensor {
		n, _ := tensor.ElementCount(shape)
		return tensor.Tensor{Name: name, DataType: tensor.FP32, Shape: shape, Raw: make([]byte, 4*n)}
	}
	for _, c := range []struct {
		in   []tensor.Tensor
		want string
	}{
		{[]tensor.Tensor{f32("s")}, "input s is a scalar"},
		{[]tensor.Tensor{f32("a", 2, 3), f32("b", 3)}, "a has 2 and b has 3; use rest_format: columnar"},
	} {
		if _, err := encodePredictBody("", formatRow, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
		if _, err := encodePredictBody("", formatColumnar, c.in); err != nil {
			t.Errorf("columnar: %v", err)
		}
	}
}

// FuzzDecodePredictReply: no reply body makes the REST decoder panic, and
// whatever it accepts is tensors consistent with their shapes.
func FuzzDecodePredictReply(f *testing.F) {
	_, replies := loadExamples(&testing.T{})
	for _, ex := range replies {
		f.Add([]byte(ex.Body), ex.Format == formatColumnar, len(ex.Outputs) > 1)
	}
	f.Fuzz(func(t *testing.T, body []byte, columnar, two bool) {
		specs := []tensorSpec{{"y", tensor.FP32}}
		if two {
			specs = []tensorSpec{{"scores", tensor.FP32}, {"label", tensor.BYTES}}
		}
		format := formatRow
		if columnar {
			format = formatColumnar
		}
		got, err := decodePredictReply(body, format, specs)
		if err != nil {
			return
		}
		for _, tt := range got {
			if err := tt.Check(); err != nil {
				t.Fatalf("inconsistent tensor: %v", err)
			}
		}
	})
}

// FuzzDecodePredictBody: no request body makes the flavour's decoder
// panic; what it accepts re-encodes and reads back the same.
func FuzzDecodePredictBody(f *testing.F) {
	requests, _ := loadExamples(&testing.T{})
	for _, ex := range requests {
		f.Add([]byte(ex.Body))
	}
	specs := []tensorSpec{{"tag", tensor.BYTES}, {"signal", tensor.INT64}, {"sensor", tensor.FP64}}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodePredictBody(body, func(string) ([]tensorSpec, error) { return specs, nil })
		if err != nil {
			return
		}
		for _, tt := range req.Inputs {
			if err := tt.Check(); err != nil {
				t.Fatalf("inconsistent tensor: %v", err)
			}
		}
		enc, err := encodePredictBody(req.Signature, formatColumnar, req.Inputs)
		if err != nil {
			return
		}
		back, err := decodePredictBody(enc, func(string) ([]tensorSpec, error) { return specs, nil })
		if err != nil {
			t.Fatalf("perfscen's own body %s is refused: %v", enc, err)
		}
		for i := range back.Inputs {
			if !reflect.DeepEqual(back.Inputs[i].Shape, req.Inputs[i].Shape) {
				t.Fatalf("shape %v came back as %v", req.Inputs[i].Shape, back.Inputs[i].Shape)
			}
		}
	})
}

// FuzzQuoteNonFinite: the rewrite never turns valid JSON invalid.
func FuzzQuoteNonFinite(f *testing.F) {
	for _, s := range []string{`[NaN, "NaN", -Infinity]`, `{"a":"\"Inf"}`, `[1e5,-2]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if q := quoteNonFinite(b); !json.Valid(q) {
			t.Fatalf("%s became invalid: %s", b, q)
		}
	})
}
