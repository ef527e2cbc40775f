package inputdata

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/tensor"
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	simple = ModelSpec{Name: "simple", MaxBatchSize: 8,
		Inputs: []TensorSpec{
			{Name: "INPUT0", DataType: tensor.INT32, Dims: []int64{16}},
			{Name: "INPUT1", DataType: tensor.INT32, Dims: []int64{16}},
		},
		Outputs: []TensorSpec{
			{Name: "OUTPUT0", DataType: tensor.INT32, Dims: []int64{16}},
			{Name: "OUTPUT1", DataType: tensor.INT32, Dims: []int64{16}},
		}}
	variable = ModelSpec{Name: "variable", MaxBatchSize: 4,
		Inputs: []TensorSpec{{Name: "INPUT", DataType: tensor.INT32, Dims: []int64{-1, -1}}}}
	strings1 = ModelSpec{Name: "seq", MaxBatchSize: 0,
		Inputs:  []TensorSpec{{Name: "INPUT", DataType: tensor.BYTES, Dims: []int64{1}}},
		Outputs: []TensorSpec{{Name: "OUTPUT", DataType: tensor.BYTES, Dims: []int64{1}}}}
	mixedTypes = ModelSpec{Name: "mixed", MaxBatchSize: 0,
		Inputs: []TensorSpec{
			{Name: "X", DataType: tensor.FP32, Dims: []int64{2, 2}},
			{Name: "H", DataType: tensor.FP16, Dims: []int64{4}},
			{Name: "FLAG", DataType: tensor.BOOL, Dims: []int64{2}},
			{Name: "BIG", DataType: tensor.UINT64, Dims: []int64{2}},
			{Name: "OPT", DataType: tensor.INT8, Dims: []int64{3}, Optional: true},
		},
		Outputs: []TensorSpec{{Name: "Y", DataType: tensor.FP64, Dims: []int64{4}}}}
	generated = ModelSpec{Name: "gen", MaxBatchSize: 2,
		Inputs: []TensorSpec{
			{Name: "IMG", DataType: tensor.UINT8, Dims: []int64{2, -1}},
			{Name: "S", DataType: tensor.INT16, Dims: []int64{3}},
			{Name: "F", DataType: tensor.BF16, Dims: []int64{2}},
			{Name: "B", DataType: tensor.BOOL, Dims: []int64{2}},
			{Name: "TXT", DataType: tensor.BYTES, Dims: []int64{2}},
		}}
)

func td(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join("testdata", n)
	}
	return out
}

// TestLoadGolden renders each loaded data set as text and compares it with
// testdata/golden/<name>.golden.
func TestLoadGolden(t *testing.T) {
	tests := []struct {
		name string
		spec ModelSpec
		src  Source
	}{
		{"flat", simple, Source{Kind: KindJSON, Paths: td("flat.json")}},
		{"two_files", simple, Source{Kind: KindJSON, Paths: td("flat.json", "flat2.json")}},
		{"batch2", simple, Source{Kind: KindJSON, Paths: td("batch.json"), BatchSize: 2}},
		{"streams", strings1, Source{Kind: KindJSON, Paths: td("streams.json")}},
		{"streams_two_files", strings1, Source{Kind: KindJSON, Paths: td("streams.json", "streams.json")}},
		{"variable", variable, Source{Kind: KindJSON, Paths: td("variable.json"), Shapes: map[string][]int64{"INPUT": {4, 4}}}},
		{"floats", mixedTypes, Source{Kind: KindJSON, Paths: td("floats.json")}},
		{"dir", simple, Source{Kind: KindDir, Paths: td("dir"), BatchSize: 3}},
		{"dir_strings", strings1, Source{Kind: KindDir, Paths: td("strdir")}},
		{"random", generated, Source{Kind: KindRandom, Seed: 7, StringLength: 5, BatchSize: 2, Shapes: map[string][]int64{"IMG": {2, 3}}}},
		{"random_string_data", generated, Source{Seed: 7, StringData: "fixed", Shapes: map[string][]int64{"IMG": {2, 1}}}},
		{"zero", generated, Source{Kind: KindZero, StringLength: 2, Shapes: map[string][]int64{"IMG": {2, 2}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load(tt.spec, tt.src)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			for _, s := range d.Streams {
				for _, st := range s {
					for _, x := range append(append([]tensor.Tensor(nil), st.Inputs...), st.Expected...) {
						if err := x.Check(); err != nil {
							t.Errorf("%s: %v", st.Origin, err)
						}
					}
				}
			}
			got := dump(t, d)
			path := filepath.Join("testdata", "golden", tt.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("mismatch with %s (run with -update to accept)\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func dump(t *testing.T, d *Data) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "sequences=%v batch=%d requests=%d expected=%v\n", d.Sequences, d.BatchSize, d.Len(), d.HasExpected())
	for si, s := range d.Streams {
		for j, st := range s {
			fmt.Fprintf(&b, "stream %d request %d (%s)\n", si, j, st.Origin)
			for _, x := range st.Inputs {
				fmt.Fprintf(&b, "  in  %s\n", tensorString(t, x))
			}
			for _, x := range st.Expected {
				fmt.Fprintf(&b, "  out %s\n", tensorString(t, x))
			}
		}
	}
	return b.String()
}

func tensorString(t *testing.T, x tensor.Tensor) string {
	t.Helper()
	var vals any
	var err error
	switch {
	case x.DataType == tensor.BYTES:
		var elems [][]byte
		elems, err = tensor.BytesElements(x.Raw)
		strs := make([]string, len(elems))
		for i, e := range elems {
			strs[i] = fmt.Sprintf("%q", e)
		}
		vals = strs
	case x.DataType == tensor.UINT64:
		vals, err = tensor.ToUint64s(x.DataType, x.Raw)
	default:
		vals, err = tensor.ToFloat64s(x.DataType, x.Raw)
	}
	if err != nil {
		t.Fatalf("decoding %s: %v", x.Name, err)
	}
	return fmt.Sprintf("%s %s %v %v", x.Name, x.DataType, x.Shape, vals)
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		spec ModelSpec
		src  Source
		want string
	}{
		{"malformed", simple, json1("malformed.json"),
			"testdata/errors/malformed.json:3:63: invalid JSON: unexpected character '}', expected a string key"},
		{"count", simple, json1("count.json"),
			"testdata/errors/count.json:5:74: step 3, tensor INPUT1: expected 16 INT32 elements (dims [16]), found 15"},
		{"unknown_input", simple, json1("unknown_input.json"),
			"testdata/errors/unknown_input.json:1:132: step 0, tensor INPUT2: model simple has no input INPUT2 (inputs: [INPUT0 INPUT1])"},
		{"missing_input", simple, json1("missing_input.json"),
			"testdata/errors/missing_input.json:1:11: step 0, tensor INPUT1: missing required input INPUT1"},
		{"wrong_type", simple, json1("wrong_type.json"),
			"testdata/errors/wrong_type.json:1:92: step 0, tensor INPUT1: expected an integer in INT32 range [-2147483648, 2147483647] (element 3), found \"1\""},
		{"range", simple, json1("range.json"),
			"testdata/errors/range.json:1:128: step 0, tensor INPUT1: expected an integer in INT32 range [-2147483648, 2147483647] (element 15), found 3000000000"},
		{"b64_size", simple, json1("b64_size.json"),
			"testdata/errors/b64_size.json:1:90: step 0, tensor INPUT1: expected 16 INT32 elements (dims [16]), found 3 (12 bytes)"},
		{"bad_b64", simple, json1("bad_b64.json"),
			"testdata/errors/bad_b64.json:1:90: step 0, tensor INPUT1: invalid base64: illegal base64 data at input byte 3"},
		{"bad_shape", variable, json1("bad_shape.json"),
			"testdata/errors/bad_shape.json:1:92: step 0, tensor INPUT: shape [2,8,1] does not match the model dims [-1,-1] (rank 3, not 2)"},
		{"var_no_shape", variable, json1("var_no_shape.json"),
			"testdata/errors/var_no_shape.json:1:21: step 0, tensor INPUT: dims [-1,-1] have more than one variable dim; give \"shape\" in the data or a shape in the scenario"},
		{"unknown_output", simple, json1("unknown_output.json"),
			"testdata/errors/unknown_output.json:1:155: validation_data step 0, tensor OUTPUT9: model simple has no output OUTPUT9 (outputs: [OUTPUT0 OUTPUT1])"},
		{"misaligned", simple, json1("misaligned.json"),
			"testdata/errors/misaligned.json:2:21: validation_data: expected 2 steps like \"data\", found 1"},
		{"stream_misaligned", strings1, json1("stream_misaligned.json"),
			"testdata/errors/stream_misaligned.json:2:63: validation_data stream 1: expected 1 steps like \"data\", found 2"},
		{"mixed", strings1, json1("mixed.json"),
			"testdata/errors/mixed.json:1:31: stream 1: a step (object) among streams (lists); use one form for the whole list"},
		{"not_object", simple, json1("not_object.json"),
			"testdata/errors/not_object.json:1:1: expected an object with a \"data\" list, found an array"},
		{"empty_data", simple, json1("empty_data.json"),
			"testdata/errors/empty_data.json:1:10: the list is empty"},
		{"unknown_key", simple, json1("unknown_key.json"),
			"testdata/errors/unknown_key.json:1:134: unknown key \"validation-data\" (valid: \"data\", \"validation_data\")"},
		{"dup_key", simple, json1("dup_key.json"),
			"testdata/errors/dup_key.json:1:72: invalid JSON: duplicate key \"INPUT0\""},
		{"bad_tensor", simple, json1("bad_tensor.json"),
			"testdata/errors/bad_tensor.json:1:82: step 0, tensor INPUT1: expected a list of values, {\"content\": ...} or {\"b64\": ...}, found a number"},
		{"bad_bytes_b64", strings1, json1("bad_bytes_b64.json"),
			"testdata/errors/bad_bytes_b64.json:1:30: stream 0, step 0, tensor INPUT: b64 data is not serialized BYTES (4-byte length before each element): BYTES element 0 at offset 0: length 5 exceeds the 2 bytes left"},
		{"batch_shapes", variable, Source{Kind: KindJSON, Paths: td("variable.json"), BatchSize: 2, Shapes: map[string][]int64{"INPUT": {4, 4}}},
			"testdata/variable.json: step 1, tensor INPUT: cannot batch shape [8,2] with shape [2,8] of step 0"},
		{"partial_validation", simple, Source{Kind: KindJSON, Paths: td("errors/partial_validation.json"), BatchSize: 2},
			"testdata/errors/partial_validation.json: validation_data step 1, tensor OUTPUT0: cannot batch with step 0: the tensor is given in only one of them"},
		{"mixed_files", strings1, Source{Kind: KindJSON, Paths: td("streams.json", "errors/count.json")},
			"testdata/errors/count.json: expected a list of streams like testdata/streams.json, found a list of steps"},
		{"batch_unsupported", strings1, Source{Kind: KindRandom, BatchSize: 2},
			"expected batch size 1 (model seq does not support batching), found batch size 2"},
		{"batch_too_big", simple, Source{Kind: KindZero, BatchSize: 9},
			"expected batch size at most 8 (max_batch_size of simple), found batch size 9"},
		{"shape_unknown_tensor", simple, Source{Shapes: map[string][]int64{"NOPE": {1}}},
			"tensor NOPE: shape given for a tensor model simple does not have (inputs [INPUT0 INPUT1], outputs [OUTPUT0 OUTPUT1])"},
		{"shape_mismatch", variable, Source{Shapes: map[string][]int64{"INPUT": {4}}},
			"tensor INPUT: shape [4] does not match the model dims [-1,-1] (rank 1, not 2)"},
		{"random_variable", variable, Source{Kind: KindRandom},
			"tensor INPUT: dims [-1,-1] are variable; give a shape in the scenario"},
		{"unknown_kind", simple, Source{Kind: "csv"},
			`unknown input data kind "csv" (valid: random, zero, json, dir)`},
		{"missing_file", simple, Source{Kind: KindJSON, Paths: td("nope.json")},
			"testdata/nope.json: cannot read input data: open testdata/nope.json: no such file or directory"},
		{"dir_errors", simple, Source{Kind: KindDir, Paths: td("baddir")},
			"testdata/baddir/EXTRA: tensor EXTRA: file does not name a model input or output (inputs [INPUT0 INPUT1], outputs [OUTPUT0 OUTPUT1])"},
		{"dir_missing", variable, Source{Kind: KindDir, Paths: td("strdir")},
			"testdata/strdir/INPUT: tensor INPUT: dims [-1,-1] have more than one variable dim; give \"shape\" in the data or a shape in the scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.spec, tt.src)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			var ie *Error
			if !errors.As(err, &ie) {
				t.Errorf("error is %T, want *inputdata.Error", err)
			}
		})
	}
}

func json1(name string) Source {
	return Source{Kind: KindJSON, Paths: td(filepath.Join("errors", name))}
}
