package tensor

import (
	"bytes"
	"math"
	"testing"
)

// Known little-endian byte vectors for the values {1, -2} (or {1, 0} for
// unsigned and BOOL types).
func TestKnownByteVectors(t *testing.T) {
	tests := []struct {
		dt   DataType
		vals []float64
		want []byte
	}{
		{BOOL, []float64{1, 0}, []byte{1, 0}},
		{UINT8, []float64{1, 255}, []byte{1, 0xff}},
		{UINT16, []float64{1, 0x1234}, []byte{1, 0, 0x34, 0x12}},
		{UINT32, []float64{1, 0x01020304}, []byte{1, 0, 0, 0, 4, 3, 2, 1}},
		{UINT64, []float64{1}, []byte{1, 0, 0, 0, 0, 0, 0, 0}},
		{INT8, []float64{1, -2}, []byte{1, 0xfe}},
		{INT16, []float64{1, -2}, []byte{1, 0, 0xfe, 0xff}},
		{INT32, []float64{1, -2}, []byte{1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}},
		{INT64, []float64{-2}, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{FP16, []float64{1, -2}, []byte{0x00, 0x3c, 0x00, 0xc0}},
		{BF16, []float64{1, -2}, []byte{0x80, 0x3f, 0x00, 0xc0}},
		{FP32, []float64{1, -2}, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{FP64, []float64{1}, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
	}
	for _, tc := range tests {
		t.Run(string(tc.dt), func(t *testing.T) {
			got, err := FromFloat64s(tc.dt, tc.vals)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("FromFloat64s = % x, want % x", got, tc.want)
			}
			back, err := ToFloat64s(tc.dt, got)
			if err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if back[i] != tc.vals[i] {
					t.Errorf("element %d round-tripped to %v, want %v", i, back[i], tc.vals[i])
				}
			}
			if tc.dt != BOOL && !tc.dt.IsInteger() {
				return
			}
			ints := make([]int64, len(tc.vals))
			for i, v := range tc.vals {
				ints[i] = int64(v)
			}
			enc, err := FromInt64s(tc.dt, ints)
			if err != nil || !bytes.Equal(enc, tc.want) {
				t.Errorf("FromInt64s = % x, %v; want % x", enc, err, tc.want)
			}
			dec, err := ToInt64s(tc.dt, tc.want)
			if err != nil {
				t.Fatal(err)
			}
			for i := range dec {
				if dec[i] != ints[i] {
					t.Errorf("ToInt64s[%d] = %d, want %d", i, dec[i], ints[i])
				}
			}
		})
	}
}

func TestTypedHelpers(t *testing.T) {
	i32 := []int32{0, 1, -1, math.MaxInt32, math.MinInt32}
	got, err := DecodeInt32s(EncodeInt32s(i32))
	if err != nil || len(got) != len(i32) {
		t.Fatalf("DecodeInt32s: %v %v", got, err)
	}
	for i := range got {
		if got[i] != i32[i] {
			t.Errorf("int32[%d] = %d, want %d", i, got[i], i32[i])
		}
	}
	f32 := []float32{0, 1.5, -3.25, float32(math.Inf(1)), math.SmallestNonzeroFloat32}
	gotf, err := DecodeFloat32s(EncodeFloat32s(f32))
	if err != nil {
		t.Fatal(err)
	}
	for i := range gotf {
		if gotf[i] != f32[i] {
			t.Errorf("float32[%d] = %v, want %v", i, gotf[i], f32[i])
		}
	}
	if _, err := DecodeInt32s(make([]byte, 5)); err == nil {
		t.Error("DecodeInt32s accepted 5 bytes")
	}
	if _, err := DecodeFloat32s(make([]byte, 3)); err == nil {
		t.Error("DecodeFloat32s accepted 3 bytes")
	}
}

func TestRangeChecks(t *testing.T) {
	bad := []struct {
		dt DataType
		v  float64
	}{
		{BOOL, 2}, {UINT8, 256}, {UINT8, -1}, {INT8, 128}, {INT8, -129}, {INT16, 1.5},
		{UINT32, 1 << 32}, {INT32, 1 << 31}, {INT64, 1 << 63}, {UINT64, 1 << 64}, {UINT64, -1},
	}
	for _, tc := range bad {
		if _, err := FromFloat64s(tc.dt, []float64{tc.v}); err == nil {
			t.Errorf("FromFloat64s(%s, %v) succeeded", tc.dt, tc.v)
		}
	}
	if _, err := FromInt64s(UINT64, []int64{-1}); err == nil {
		t.Error("FromInt64s(UINT64, -1) succeeded")
	}
	if _, err := FromInt64s(INT16, []int64{40000}); err == nil {
		t.Error("FromInt64s(INT16, 40000) succeeded")
	}
	if _, err := ToInt64s(UINT64, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}); err == nil {
		t.Error("ToInt64s accepted a UINT64 above MaxInt64")
	}
	u, err := ToUint64s(UINT64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if err != nil || u[0] != math.MaxUint64 {
		t.Errorf("ToUint64s = %v, %v", u, err)
	}
	if _, err := ToInt64s(FP32, make([]byte, 4)); err == nil {
		t.Error("ToInt64s accepted FP32")
	}
	if _, err := ToFloat64s(BYTES, nil); err == nil {
		t.Error("ToFloat64s accepted BYTES")
	}
}

func TestFloat16AllValuesRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		f := Float16ToFloat32(uint16(h))
		back := Float32ToFloat16(f)
		if math.IsNaN(float64(f)) {
			if back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}

func TestFloat16Rounding(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00},
		{65504, 0x7bff},
		{65519, 0x7bff},                // below the halfway point to 65536
		{65520, 0x7c00},                // halfway rounds to even: Inf
		{1 + 1.0/2048, 0x3c00},         // tie between 1 and 1+2^-10 -> even (1)
		{1 + 3.0/2048, 0x3c02},         // tie -> even (1+2^-9)
		{float32(math.Pow(2, -24)), 1}, // smallest subnormal
		{float32(math.Pow(2, -25)), 0}, // tie with zero -> even (0)
		{float32(math.Pow(2, -25)) * 1.5, 1},
		{0, 0},
		{float32(math.Copysign(0, -1)), 0x8000}, // negative zero keeps its sign
		{float32(math.Inf(-1)), 0xfc00},
		{1e-10, 0},
	}
	for _, tc := range tests {
		if got := Float32ToFloat16(tc.f); got != tc.want {
			t.Errorf("Float32ToFloat16(%v) = %#04x, want %#04x", tc.f, got, tc.want)
		}
	}
}

func TestBFloat16(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie -> even
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie -> even (up)
		{math.Float32frombits(0x3f808001), 0x3f81},
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, tc := range tests {
		if got := Float32ToBFloat16(tc.f); got != tc.want {
			t.Errorf("Float32ToBFloat16(%v) = %#04x, want %#04x", tc.f, got, tc.want)
		}
	}
	nan := Float32ToBFloat16(float32(math.NaN()))
	if !math.IsNaN(float64(BFloat16ToFloat32(nan))) {
		t.Errorf("NaN narrowed to %#04x, not a NaN", nan)
	}
	for h := range 1 << 16 {
		f := BFloat16ToFloat32(uint16(h))
		if math.IsNaN(float64(f)) {
			continue
		}
		if back := Float32ToBFloat16(f); back != uint16(h) {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}
