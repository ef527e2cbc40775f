package validate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/perfscen/perfscen/internal/tensor"
)

func f32(name string, shape []int64, v ...float64) Tensor {
	raw, err := tensor.FromFloat64s(tensor.FP32, v)
	if err != nil {
		panic(err)
	}
	return Tensor{Name: name, DataType: string(tensor.FP32), Shape: shape, Data: raw}
}

func typed(name string, dt tensor.DataType, v ...float64) Tensor {
	raw, err := tensor.FromFloat64s(dt, v)
	if err != nil {
		panic(err)
	}
	return Tensor{Name: name, DataType: string(dt), Shape: []int64{int64(len(v))}, Data: raw}
}

func strs(name string, v ...string) Tensor {
	elems := make([][]byte, len(v))
	for i, s := range v {
		elems[i] = []byte(s)
	}
	return Tensor{Name: name, DataType: string(tensor.BYTES), Shape: []int64{int64(len(v))}, Data: tensor.EncodeBytesElements(elems)}
}

func u64(name string, v ...uint64) Tensor {
	raw, err := tensor.FromUint64s(tensor.UINT64, v)
	if err != nil {
		panic(err)
	}
	return Tensor{Name: name, DataType: string(tensor.UINT64), Shape: []int64{int64(len(v))}, Data: raw}
}

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name     string
		expected []Tensor
		got      []Tensor
		opts     Options
		checked  int
		wantMism int
		want     string // Result.String()
	}{
		{"equal ints", []Tensor{typed("O", tensor.INT32, 1, 2, 3)}, []Tensor{typed("O", tensor.INT32, 1, 2, 3)}, Options{}, 3, 0, "ok (3 elements)"},
		{"int differs", []Tensor{typed("OUTPUT0", tensor.INT32, 0, 0, 0, 7)}, []Tensor{typed("OUTPUT0", tensor.INT32, 0, 0, 0, 8)}, Options{}, 4, 1,
			"OUTPUT0[3]: expected 7, got 8"},
		{"ints exact even within float tolerance", []Tensor{typed("O", tensor.INT64, 1000000)}, []Tensor{typed("O", tensor.INT64, 1000001)}, Options{FloatTolerance: 0.1}, 1, 1,
			"O[0]: expected 1000000, got 1000001"},
		{"uint64 above int64", []Tensor{u64("U", math.MaxUint64)}, []Tensor{u64("U", math.MaxUint64-1)}, Options{}, 1, 1,
			"U[0]: expected 18446744073709551615, got 18446744073709551614"},
		{"bool", []Tensor{typed("B", tensor.BOOL, 1, 0)}, []Tensor{typed("B", tensor.BOOL, 1, 1)}, Options{}, 2, 1,
			"B[1]: expected false, got true"},
		{"bytes", []Tensor{strs("S", "a", "bc")}, []Tensor{strs("S", "a", "bd")}, Options{}, 2, 1,
			`S[1]: expected "bc", got "bd"`},
		{"bytes long element cut", []Tensor{strs("S", strings.Repeat("x", 70))}, []Tensor{strs("S", "y")}, Options{}, 1, 1,
			`S[0]: expected "` + strings.Repeat("x", 64) + `"... (70 bytes), got "y"`},
		{"fp32 within default absolute", []Tensor{f32("F", []int64{2}, 0, 1)}, []Tensor{f32("F", []int64{2}, 9e-6, 1)}, Options{}, 2, 0, "ok (2 elements)"},
		{"fp32 beyond default absolute", []Tensor{f32("F", []int64{1}, 0)}, []Tensor{f32("F", []int64{1}, 2e-5)}, Options{}, 1, 1,
			"F[0]: expected 0, got 1.9999999494757503e-05"},
		{"fp32 relative for large values", []Tensor{f32("F", []int64{1}, 1e6)}, []Tensor{f32("F", []int64{1}, 1e6+5)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp32 relative exceeded", []Tensor{f32("F", []int64{1}, 1e6)}, []Tensor{f32("F", []int64{1}, 1e6+20)}, Options{}, 1, 1,
			"F[0]: expected 1e+06, got 1.00002e+06"},
		{"looser tolerance", []Tensor{f32("F", []int64{1}, 1)}, []Tensor{f32("F", []int64{1}, 1.05)}, Options{FloatTolerance: 0.1}, 1, 0, "ok (1 elements)"},
		{"nan equals nan", []Tensor{f32("F", []int64{2}, nan, 1)}, []Tensor{f32("F", []int64{2}, nan, 1)}, Options{}, 2, 0, "ok (2 elements)"},
		{"nan vs number", []Tensor{f32("F", []int64{1}, nan)}, []Tensor{f32("F", []int64{1}, 0)}, Options{}, 1, 1, "F[0]: expected NaN, got 0"},
		{"number vs nan", []Tensor{f32("F", []int64{1}, 0)}, []Tensor{f32("F", []int64{1}, nan)}, Options{}, 1, 1, "F[0]: expected 0, got NaN"},
		{"inf equals inf", []Tensor{f32("F", []int64{1}, inf)}, []Tensor{f32("F", []int64{1}, inf)}, Options{}, 1, 0, "ok (1 elements)"},
		{"inf vs -inf", []Tensor{f32("F", []int64{1}, inf)}, []Tensor{f32("F", []int64{1}, -inf)}, Options{FloatTolerance: 1e9}, 1, 1, "F[0]: expected +Inf, got -Inf"},
		{"inf vs max float", []Tensor{f32("F", []int64{1}, inf)}, []Tensor{f32("F", []int64{1}, math.MaxFloat32)}, Options{FloatTolerance: 0.5}, 1, 1,
			"F[0]: expected +Inf, got 3.4028234663852886e+38"},
		{"fp16 floor applies", []Tensor{typed("H", tensor.FP16, 1)}, []Tensor{typed("H", tensor.FP16, 1.0009765625)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp16 beyond floor", []Tensor{typed("H", tensor.FP16, 1)}, []Tensor{typed("H", tensor.FP16, 1.00390625)}, Options{}, 1, 1, "H[0]: expected 1, got 1.00390625"},
		{"bf16 floor applies", []Tensor{typed("B", tensor.BF16, 1)}, []Tensor{typed("B", tensor.BF16, 1.0078125)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp64 tight", []Tensor{typed("D", tensor.FP64, 1)}, []Tensor{typed("D", tensor.FP64, 1+2e-5)}, Options{}, 1, 1, "D[0]: expected 1, got 1.00002"},
		{"missing output", []Tensor{typed("A", tensor.INT8, 1)}, []Tensor{typed("B", tensor.INT8, 1)}, Options{}, 0, 1, "A: expected an output, got none"},
		{"extra output ignored", []Tensor{typed("A", tensor.INT8, 1)}, []Tensor{typed("B", tensor.INT8, 2), typed("A", tensor.INT8, 1)}, Options{}, 1, 0, "ok (1 elements)"},
		{"datatype", []Tensor{typed("A", tensor.INT8, 1)}, []Tensor{typed("A", tensor.UINT8, 1)}, Options{}, 0, 1, "A: expected datatype INT8, got UINT8"},
		{"shape", []Tensor{f32("A", []int64{1, 2}, 1, 2)}, []Tensor{f32("A", []int64{2, 1}, 1, 2)}, Options{}, 0, 1, "A: expected shape [1 2], got [2 1]"},
		{"truncated data", []Tensor{f32("A", []int64{2}, 1, 2)}, []Tensor{{Name: "A", DataType: "FP32", Shape: []int64{2}, Data: make([]byte, 7)}}, Options{}, 0, 1,
			`A: expected data matching the shape , got tensor "A": 7 bytes of data, shape [2] FP32 needs 8`},
		{"max reported", []Tensor{typed("O", tensor.INT16, 1, 2, 3, 4)}, []Tensor{typed("O", tensor.INT16, 0, 0, 0, 0)}, Options{MaxReported: 2}, 4, 4,
			"O[0]: expected 1, got 0\nO[1]: expected 2, got 0\n... and 2 more mismatches (4 elements checked)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Compare(tt.expected, tt.got, tt.opts)
			if r.Checked != tt.checked || r.Mismatches != tt.wantMism {
				t.Errorf("checked %d mismatches %d, want %d and %d", r.Checked, r.Mismatches, tt.checked, tt.wantMism)
			}
			if r.OK() != (tt.wantMism == 0) {
				t.Errorf("OK() = %v", r.OK())
			}
			if got := r.String(); got != tt.want {
				t.Errorf("String()\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestTolerance(t *testing.T) {
	tests := []struct {
		opts Options
		dt   tensor.DataType
		want float64
	}{
		{Options{}, tensor.FP32, 1e-5},
		{Options{}, tensor.FP64, 1e-5},
		{Options{}, tensor.FP16, FP16Tolerance},
		{Options{}, tensor.BF16, BF16Tolerance},
		{Options{FloatTolerance: 1e-7}, tensor.FP16, FP16Tolerance},
		{Options{FloatTolerance: 0.1}, tensor.BF16, 0.1},
		{Options{FloatTolerance: 0.1}, tensor.FP32, 0.1},
	}
	for _, tt := range tests {
		if got := tt.opts.Tolerance(string(tt.dt)); got != tt.want {
			t.Errorf("%+v %s: %g, want %g", tt.opts, tt.dt, got, tt.want)
		}
	}
}

// TestFloatFastPath checks that the shortcut never accepts a pair that go-cmp
// would reject, across magnitudes, signs and the edges of the bound.
func TestFloatFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tol := range []float64{1e-5, FP16Tolerance, BF16Tolerance, 0.5} {
		opts := []cmp.Option{cmpopts.EquateApprox(tol, tol), cmpopts.EquateNaNs()}
		for range 20000 {
			a := (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(13)-6))
			// Offsets straddle both the absolute and the relative bound.
			scale := []float64{tol, tol * math.Abs(a)}[rng.IntN(2)]
			b := a + scale*(rng.Float64()*2.2-1.1)
			if withinFast(a, b, tol) && !cmp.Equal(a, b, opts...) {
				t.Fatalf("tol %g: fast path accepts %v vs %v, cmp rejects", tol, a, b)
			}
		}
	}
}
