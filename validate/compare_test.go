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

func f32(name string, shape []int64, v ...float64) tensor.Tensor {
	raw, err := tensor.FromFloat64s(tensor.FP32, v)
	if err != nil {
		panic(err)
	}
	return tensor.Tensor{Name: name, DataType: tensor.FP32, Shape: shape, Raw: raw}
}

func typed(name string, dt tensor.DataType, v ...float64) tensor.Tensor {
	raw, err := tensor.FromFloat64s(dt, v)
	if err != nil {
		panic(err)
	}
	return tensor.Tensor{Name: name, DataType: dt, Shape: []int64{int64(len(v))}, Raw: raw}
}

func strs(name string, v ...string) tensor.Tensor {
	elems := make([][]byte, len(v))
	for i, s := range v {
		elems[i] = []byte(s)
	}
	return tensor.Tensor{Name: name, DataType: tensor.BYTES, Shape: []int64{int64(len(v))}, Raw: tensor.EncodeBytesElements(elems)}
}

func u64(name string, v ...uint64) tensor.Tensor {
	raw, err := tensor.FromUint64s(tensor.UINT64, v)
	if err != nil {
		panic(err)
	}
	return tensor.Tensor{Name: name, DataType: tensor.UINT64, Shape: []int64{int64(len(v))}, Raw: raw}
}

func TestCompare(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name     string
		expected []tensor.Tensor
		got      []tensor.Tensor
		opts     Options
		checked  int
		wantMism int
		want     string // Result.String()
	}{
		{"equal ints", []tensor.Tensor{typed("O", tensor.INT32, 1, 2, 3)}, []tensor.Tensor{typed("O", tensor.INT32, 1, 2, 3)}, Options{}, 3, 0, "ok (3 elements)"},
		{"int differs", []tensor.Tensor{typed("OUTPUT0", tensor.INT32, 0, 0, 0, 7)}, []tensor.Tensor{typed("OUTPUT0", tensor.INT32, 0, 0, 0, 8)}, Options{}, 4, 1,
			"OUTPUT0[3]: expected 7, got 8"},
		{"ints exact even within float tolerance", []tensor.Tensor{typed("O", tensor.INT64, 1000000)}, []tensor.Tensor{typed("O", tensor.INT64, 1000001)}, Options{FloatTolerance: 0.1}, 1, 1,
			"O[0]: expected 1000000, got 1000001"},
		{"uint64 above int64", []tensor.Tensor{u64("U", math.MaxUint64)}, []tensor.Tensor{u64("U", math.MaxUint64-1)}, Options{}, 1, 1,
			"U[0]: expected 18446744073709551615, got 18446744073709551614"},
		{"bool", []tensor.Tensor{typed("B", tensor.BOOL, 1, 0)}, []tensor.Tensor{typed("B", tensor.BOOL, 1, 1)}, Options{}, 2, 1,
			"B[1]: expected false, got true"},
		{"bytes", []tensor.Tensor{strs("S", "a", "bc")}, []tensor.Tensor{strs("S", "a", "bd")}, Options{}, 2, 1,
			`S[1]: expected "bc", got "bd"`},
		{"bytes long element cut", []tensor.Tensor{strs("S", strings.Repeat("x", 70))}, []tensor.Tensor{strs("S", "y")}, Options{}, 1, 1,
			`S[0]: expected "` + strings.Repeat("x", 64) + `"... (70 bytes), got "y"`},
		{"fp32 within default absolute", []tensor.Tensor{f32("F", []int64{2}, 0, 1)}, []tensor.Tensor{f32("F", []int64{2}, 9e-6, 1)}, Options{}, 2, 0, "ok (2 elements)"},
		{"fp32 beyond default absolute", []tensor.Tensor{f32("F", []int64{1}, 0)}, []tensor.Tensor{f32("F", []int64{1}, 2e-5)}, Options{}, 1, 1,
			"F[0]: expected 0, got 1.9999999494757503e-05"},
		{"fp32 relative for large values", []tensor.Tensor{f32("F", []int64{1}, 1e6)}, []tensor.Tensor{f32("F", []int64{1}, 1e6+5)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp32 relative exceeded", []tensor.Tensor{f32("F", []int64{1}, 1e6)}, []tensor.Tensor{f32("F", []int64{1}, 1e6+20)}, Options{}, 1, 1,
			"F[0]: expected 1e+06, got 1.00002e+06"},
		{"looser tolerance", []tensor.Tensor{f32("F", []int64{1}, 1)}, []tensor.Tensor{f32("F", []int64{1}, 1.05)}, Options{FloatTolerance: 0.1}, 1, 0, "ok (1 elements)"},
		{"nan equals nan", []tensor.Tensor{f32("F", []int64{2}, nan, 1)}, []tensor.Tensor{f32("F", []int64{2}, nan, 1)}, Options{}, 2, 0, "ok (2 elements)"},
		{"nan vs number", []tensor.Tensor{f32("F", []int64{1}, nan)}, []tensor.Tensor{f32("F", []int64{1}, 0)}, Options{}, 1, 1, "F[0]: expected NaN, got 0"},
		{"number vs nan", []tensor.Tensor{f32("F", []int64{1}, 0)}, []tensor.Tensor{f32("F", []int64{1}, nan)}, Options{}, 1, 1, "F[0]: expected 0, got NaN"},
		{"inf equals inf", []tensor.Tensor{f32("F", []int64{1}, inf)}, []tensor.Tensor{f32("F", []int64{1}, inf)}, Options{}, 1, 0, "ok (1 elements)"},
		{"inf vs -inf", []tensor.Tensor{f32("F", []int64{1}, inf)}, []tensor.Tensor{f32("F", []int64{1}, -inf)}, Options{FloatTolerance: 1e9}, 1, 1, "F[0]: expected +Inf, got -Inf"},
		{"inf vs max float", []tensor.Tensor{f32("F", []int64{1}, inf)}, []tensor.Tensor{f32("F", []int64{1}, math.MaxFloat32)}, Options{FloatTolerance: 0.5}, 1, 1,
			"F[0]: expected +Inf, got 3.4028234663852886e+38"},
		{"fp16 floor applies", []tensor.Tensor{typed("H", tensor.FP16, 1)}, []tensor.Tensor{typed("H", tensor.FP16, 1.0009765625)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp16 beyond floor", []tensor.Tensor{typed("H", tensor.FP16, 1)}, []tensor.Tensor{typed("H", tensor.FP16, 1.00390625)}, Options{}, 1, 1, "H[0]: expected 1, got 1.00390625"},
		{"bf16 floor applies", []tensor.Tensor{typed("B", tensor.BF16, 1)}, []tensor.Tensor{typed("B", tensor.BF16, 1.0078125)}, Options{}, 1, 0, "ok (1 elements)"},
		{"fp64 tight", []tensor.Tensor{typed("D", tensor.FP64, 1)}, []tensor.Tensor{typed("D", tensor.FP64, 1+2e-5)}, Options{}, 1, 1, "D[0]: expected 1, got 1.00002"},
		{"missing output", []tensor.Tensor{typed("A", tensor.INT8, 1)}, []tensor.Tensor{typed("B", tensor.INT8, 1)}, Options{}, 0, 1, "A: expected an output, got none"},
		{"extra output ignored", []tensor.Tensor{typed("A", tensor.INT8, 1)}, []tensor.Tensor{typed("B", tensor.INT8, 2), typed("A", tensor.INT8, 1)}, Options{}, 1, 0, "ok (1 elements)"},
		{"datatype", []tensor.Tensor{typed("A", tensor.INT8, 1)}, []tensor.Tensor{typed("A", tensor.UINT8, 1)}, Options{}, 0, 1, "A: expected datatype INT8, got UINT8"},
		{"shape", []tensor.Tensor{f32("A", []int64{1, 2}, 1, 2)}, []tensor.Tensor{f32("A", []int64{2, 1}, 1, 2)}, Options{}, 0, 1, "A: expected shape [1 2], got [2 1]"},
		{"truncated data", []tensor.Tensor{f32("A", []int64{2}, 1, 2)}, []tensor.Tensor{{Name: "A", DataType: tensor.FP32, Shape: []int64{2}, Raw: make([]byte, 7)}}, Options{}, 0, 1,
			`A: expected data matching the shape , got tensor "A": 7 bytes of data, shape [2] FP32 needs 8`},
		{"max reported", []tensor.Tensor{typed("O", tensor.INT16, 1, 2, 3, 4)}, []tensor.Tensor{typed("O", tensor.INT16, 0, 0, 0, 0)}, Options{MaxReported: 2}, 4, 4,
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

func TestMerge(t *testing.T) {
	a := Result{Checked: 3, Mismatches: 2, First: []Mismatch{{Tensor: "A", Index: 0}, {Tensor: "A", Index: 1}}}
	b := Result{Checked: 5, Mismatches: 1, First: []Mismatch{{Tensor: "B", Index: 4}}}
	var total Result
	total.Merge(a, 2)
	total.Merge(b, 2)
	if total.Checked != 8 || total.Mismatches != 3 || len(total.First) != 2 || total.First[1].Tensor != "A" {
		t.Errorf("merged %+v", total)
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
		if got := tt.opts.Tolerance(tt.dt); got != tt.want {
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
