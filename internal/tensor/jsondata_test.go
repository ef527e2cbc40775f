package tensor

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestFromJSONDataFlatAndNested(t *testing.T) {
	tests := []struct {
		dt    DataType
		shape []int64
		data  string
		want  []byte
	}{
		{INT32, []int64{2, 2}, `[1,2,3,4]`, EncodeInt32s([]int32{1, 2, 3, 4})},
		{INT32, []int64{2, 2}, `[[1,2],[3,4]]`, EncodeInt32s([]int32{1, 2, 3, 4})},
		{FP32, []int64{3}, `[0.5, -1e3, 2]`, EncodeFloat32s([]float32{0.5, -1000, 2})},
		{BOOL, []int64{3}, `[true,false,true]`, []byte{1, 0, 1}},
		{BYTES, []int64{2}, `["ab",""]`, EncodeBytesElements([][]byte{[]byte("ab"), {}})},
		{UINT64, []int64{1}, `[18446744073709551615]`, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{INT64, []int64{1}, `[-9223372036854775808]`, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{FP16, []int64{1}, `[1]`, []byte{0, 0x3c}},
		{INT8, []int64{0}, `[]`, []byte{}},
	}
	for _, tc := range tests {
		got, err := FromJSONData("x", tc.dt, tc.shape, json.RawMessage(tc.data))
		if err != nil {
			t.Errorf("%s %s: %v", tc.dt, tc.data, err)
			continue
		}
		if !bytes.Equal(got.Raw, tc.want) {
			t.Errorf("%s %s: raw % x, want % x", tc.dt, tc.data, got.Raw, tc.want)
		}
	}
}

func TestFromJSONDataErrors(t *testing.T) {
	tests := []struct {
		dt      DataType
		shape   []int64
		data    string
		wantMsg string
	}{
		{INT32, []int64{2}, `[1,2,3]`, "data has 3 elements, shape [2] needs 2"},
		{INT32, []int64{1}, `[1.5]`, "element 0: 1.5 is not a valid INT32 value"},
		{INT8, []int64{1}, `[128]`, "element 0: 128 is not a valid INT8 value"},
		{UINT8, []int64{1}, `[-1]`, "not a valid UINT8 value"},
		{BOOL, []int64{1}, `[1]`, "BOOL data must be true or false, got a number"},
		{BYTES, []int64{1}, `[1]`, "BYTES data must be a string, got a number"},
		{FP32, []int64{1}, `["1"]`, "FP32 data must be a number, got a string"},
		{FP32, []int64{1}, `[1e39]`, "out of FP32 range"},
		{FP32, []int64{1}, `1`, "data must be a JSON array"},
		{FP32, []int64{1}, `[1] [2]`, "trailing content"},
		{FP32, []int64{1}, `[1`, "not valid JSON"},
		{FP32, []int64{-1}, `[1]`, "invalid shape"},
		{"FLOAT", []int64{1}, `[1]`, "unknown datatype"},
	}
	for _, tc := range tests {
		_, err := FromJSONData("in", tc.dt, tc.shape, json.RawMessage(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), `"in"`) {
			t.Errorf("%s %s: error %v, want it to name the tensor and contain %q", tc.dt, tc.data, err, tc.wantMsg)
		}
	}
}

func TestJSONDataAllTypes(t *testing.T) {
	for _, dt := range DataTypes {
		t.Run(string(dt), func(t *testing.T) {
			var in Tensor
			var err error
			if dt == BYTES {
				in, err = FromJSONData("x", dt, []int64{3}, json.RawMessage(`["a","\"q\"","é"]`))
			} else if dt == BOOL {
				in, err = FromJSONData("x", dt, []int64{3}, json.RawMessage(`[true,false,true]`))
			} else {
				in, err = FromJSONData("x", dt, []int64{3}, json.RawMessage(`[0,1,100]`))
			}
			if err != nil {
				t.Fatal(err)
			}
			v, err := JSONData(in)
			if err != nil {
				t.Fatal(err)
			}
			viaReflect, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			direct, err := MarshalJSONData(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(viaReflect, direct) {
				t.Errorf("MarshalJSONData %s, json.Marshal(JSONData) %s", direct, viaReflect)
			}
			back, err := FromJSONData("x", dt, []int64{3}, direct)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Raw, in.Raw) {
				t.Errorf("round trip % x, want % x", back.Raw, in.Raw)
			}
		})
	}
}

func TestMarshalJSONDataFloats(t *testing.T) {
	vals := []float32{0.1, 1e-7, 1e21, -0, 123456.789, 3}
	in := Tensor{Name: "f", DataType: FP32, Shape: []int64{int64(len(vals))}, Raw: EncodeFloat32s(vals)}
	v, _ := JSONData(in)
	want, _ := json.Marshal(v)
	got, err := MarshalJSONData(in)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("MarshalJSONData = %s, %v; want %s", got, err, want)
	}
	if string(got) != `[0.1,1e-7,1e+21,0,123456.79,3]` {
		t.Errorf("FP32 JSON = %s", got)
	}
	nan := Tensor{Name: "f", DataType: FP64, Shape: []int64{1}, Raw: EncodeFloat64s([]float64{math.NaN()})}
	if _, err := JSONData(nan); err == nil {
		t.Error("JSONData accepted NaN")
	}
	if _, err := MarshalJSONData(nan); err == nil {
		t.Error("MarshalJSONData accepted NaN")
	}
}

func FuzzFromJSONData(f *testing.F) {
	f.Add(uint8(7), `[[1,2],[3,4]]`, int64(2), int64(2))
	f.Add(uint8(13), `["a","b"]`, int64(2), int64(1))
	f.Add(uint8(0), `[true,false]`, int64(1), int64(2))
	f.Add(uint8(11), `[1e300, -0.0]`, int64(2), int64(1))
	f.Add(uint8(4), `[18446744073709551615]`, int64(1), int64(1))
	f.Fuzz(func(t *testing.T, dti uint8, data string, d0, d1 int64) {
		dt := DataTypes[int(dti)%len(DataTypes)]
		shape := []int64{d0, d1}
		got, err := FromJSONData("x", dt, shape, json.RawMessage(data))
		if err != nil {
			return
		}
		if err := got.Check(); err != nil {
			t.Fatalf("FromJSONData produced an inconsistent tensor: %v", err)
		}
		enc, err := MarshalJSONData(got)
		if err != nil {
			return // e.g. FP values that overflowed to Inf on narrowing
		}
		back, err := FromJSONData("x", dt, shape, enc)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", enc, err)
		}
		if !bytes.Equal(back.Raw, got.Raw) && dt != BYTES {
			t.Fatalf("round trip % x != % x", back.Raw, got.Raw)
		}
	})
}
