package kservev2

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/perfscen/perfscen/internal/kservev2/inferencepb"
	"github.com/perfscen/perfscen/internal/tensor"
)

func TestParametersKeepPrecision(t *testing.T) {
	var p Parameters
	if err := json.Unmarshal([]byte(`{"sequence_id":9007199254740993,"sequence_start":true,"name":"x","f":1.5}`), &p); err != nil {
		t.Fatal(err)
	}
	id, ok, err := p.Int64(ParamSequenceID)
	if err != nil || !ok || id != 9007199254740993 {
		t.Errorf("Int64 = %d, %v, %v", id, ok, err)
	}
	if b, ok, err := p.Bool(ParamSequenceStart); !b || !ok || err != nil {
		t.Errorf("Bool = %v %v %v", b, ok, err)
	}
	if _, _, err := p.Bool("name"); err == nil {
		t.Error("Bool accepted a string")
	}
	if _, _, err := p.Int64("f"); err == nil {
		t.Error("Int64 accepted 1.5")
	}
	if _, ok, _ := p.String("missing"); ok {
		t.Error("missing key reported present")
	}
}

func TestParamProtoConversion(t *testing.T) {
	tests := []struct {
		in   any
		want any
	}{
		{true, true},
		{"s", "s"},
		{int64(-5), int64(-5)},
		{42, int64(42)},
		{json.Number("7"), int64(7)},
		{json.Number("18446744073709551615"), uint64(math.MaxUint64)},
		{json.Number("2.5"), 2.5},
		{float64(3), int64(3)},
		{0.25, 0.25},
		{uint64(math.MaxUint64), uint64(math.MaxUint64)},
	}
	for _, tc := range tests {
		p, err := ParamToProto(tc.in)
		if err != nil {
			t.Errorf("ParamToProto(%#v): %v", tc.in, err)
			continue
		}
		if got := ParamFromProto(p); got != tc.want {
			t.Errorf("ParamToProto(%#v) -> %#v, want %#v", tc.in, got, tc.want)
		}
	}
	if _, err := ParamToProto([]int{1}); err == nil {
		t.Error("ParamToProto accepted a slice")
	}
	if ParamFromProto(&inferencepb.InferParameter{}) != nil {
		t.Error("unset parameter should be nil")
	}
}

func TestContentsRoundTrip(t *testing.T) {
	for _, dt := range tensor.DataTypes {
		var raw []byte
		switch dt {
		case tensor.BYTES:
			raw = tensor.EncodeBytesElements([][]byte{[]byte("a"), {}})
		case tensor.BOOL:
			raw = []byte{1, 0}
		default:
			raw, _ = tensor.FromFloat64s(dt, []float64{1, 2})
		}
		c, err := RawToContents(dt, raw)
		if dt == tensor.FP16 || dt == tensor.BF16 {
			if err == nil {
				t.Errorf("%s: RawToContents succeeded; Triton has no contents field for it", dt)
			}
			if _, err := ContentsToRaw(dt, &inferencepb.InferTensorContents{}); err == nil {
				t.Errorf("%s: ContentsToRaw succeeded", dt)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		back, err := ContentsToRaw(dt, c)
		if err != nil || string(back) != string(raw) {
			t.Errorf("%s: round trip % x, %v; want % x", dt, back, err, raw)
		}
	}
	if _, err := ContentsToRaw(tensor.UINT8, &inferencepb.InferTensorContents{UintContents: []uint32{256}}); err == nil {
		t.Error("UINT8 content 256 accepted")
	}
}

func TestModelStatsJSONEmptyCollections(t *testing.T) {
	b, err := json.Marshal(StatisticsResponse{ModelStats: []ModelStats{{Name: "m", Version: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model_stats":[{"name":"m","version":"1","last_inference":0,"inference_count":0,"execution_count":0,` +
		`"inference_stats":{"success":{"count":0,"ns":0},"fail":{"count":0,"ns":0},"queue":{"count":0,"ns":0},` +
		`"compute_input":{"count":0,"ns":0},"compute_infer":{"count":0,"ns":0},"compute_output":{"count":0,"ns":0},` +
		`"cache_hit":{"count":0,"ns":0},"cache_miss":{"count":0,"ns":0}},"response_stats":{},"batch_stats":[],"memory_usage":[]}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if d := (StatDuration{Count: 1, Ns: 5}).Sub(StatDuration{Count: 3, Ns: 2}); d != (StatDuration{0, 3}) {
		t.Errorf("Sub = %+v", d)
	}
}
