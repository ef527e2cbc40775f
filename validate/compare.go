package validate

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Tensor is a named, typed, shaped block of row-major data, as inference
// servers exchange them.
type Tensor struct {
	Name string
	// DataType is the KServe v2 (Open Inference Protocol) datatype name:
	// BOOL, UINT8 … UINT64, INT8 … INT64, FP16, BF16, FP32, FP64 or BYTES.
	DataType string
	Shape    []int64
	// Data is the raw little-endian element bytes; a BYTES tensor holds
	// each element as a 4-byte little-endian length and its bytes.
	Data []byte
}

// Compare checks every expected tensor against the output of the same name
// in got. Outputs in got that nothing expects are ignored: validation data
// may cover only some outputs.
func Compare(expected, got []Tensor, opts Options) Result {
	opts = opts.withDefaults()
	var r Result
	for _, want := range expected {
		i := slices.IndexFunc(got, func(t Tensor) bool { return t.Name == want.Name })
		if i < 0 {
			r.add(Mismatch{Tensor: want.Name, Index: -1, Expected: "an output", Got: "none"}, opts.MaxReported)
			continue
		}
		compareTensor(&r, internal(want), internal(got[i]), opts)
	}
	return r
}

func internal(t Tensor) tensor.Tensor {
	return tensor.Tensor{Name: t.Name, DataType: tensor.DataType(t.DataType), Shape: t.Shape, Raw: t.Data}
}

func compareTensor(r *Result, want, got tensor.Tensor, opts Options) {
	fault := func(what, e, g string) {
		r.add(Mismatch{Tensor: want.Name, Index: -1, Expected: what + " " + e, Got: g}, opts.MaxReported)
	}
	if want.DataType != got.DataType {
		fault("datatype", string(want.DataType), string(got.DataType))
		return
	}
	if !want.DataType.Valid() {
		fault("a known datatype", "", string(want.DataType))
		return
	}
	if !slices.Equal(want.Shape, got.Shape) {
		fault("shape", fmt.Sprint(want.Shape), fmt.Sprint(got.Shape))
		return
	}
	if err := want.Check(); err != nil {
		fault("valid expected data", "", err.Error())
		return
	}
	if err := got.Check(); err != nil {
		fault("data matching the shape", "", err.Error())
		return
	}
	switch dt := want.DataType; {
	case dt == tensor.BYTES:
		compareBytes(r, want, got, opts)
	case dt.IsFloat():
		compareFloats(r, want, got, opts)
	default:
		compareExact(r, want, got, opts)
	}
}

// compareFloats uses go-cmp's approximate equality: values match when
// |e-g| <= max(tol, tol·min(|e|,|g|)). NaN equals NaN (a model expected to
// emit NaN and doing so is correct); infinities match only themselves.
func compareFloats(r *Result, want, got tensor.Tensor, opts Options) {
	n := len(want.Raw) / want.DataType.Size()
	r.Checked += n
	if bytes.Equal(want.Raw, got.Raw) {
		return
	}
	w, _ := tensor.ToFloat64s(want.DataType, want.Raw)
	g, _ := tensor.ToFloat64s(got.DataType, got.Raw)
	tol := opts.Tolerance(string(want.DataType))
	eq := floatEqual(tol)
	for i := range w {
		if !eq(w[i], g[i]) {
			r.add(Mismatch{Tensor: want.Name, Index: i, Expected: formatFloat(w[i]), Got: formatFloat(g[i])}, opts.MaxReported)
		}
	}
}

// floatEqual returns the element test. cmp.Equal is the authority, but it
// costs several microseconds per call through reflection, so finite values
// that are plainly inside the bound skip it; TestFloatFastPath keeps the
// two in agreement.
func floatEqual(tol float64) func(a, b float64) bool {
	opts := []cmp.Option{cmpopts.EquateApprox(tol, tol), cmpopts.EquateNaNs()}
	return func(a, b float64) bool {
		if a == b || withinFast(a, b, tol) {
			return true
		}
		return cmp.Equal(a, b, opts...)
	}
}

// withinFast is true only for finite pairs that EquateApprox(tol, tol) accepts.
func withinFast(a, b, tol float64) bool {
	d := math.Abs(a - b)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return false
	}
	return d <= tol || d <= tol*math.Min(math.Abs(a), math.Abs(b))
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// compareExact handles BOOL and integers element by element on the raw
// bytes, decoding only what it reports.
func compareExact(r *Result, want, got tensor.Tensor, opts Options) {
	size := want.DataType.Size()
	n := len(want.Raw) / size
	r.Checked += n
	if bytes.Equal(want.Raw, got.Raw) {
		return
	}
	for i := 0; i < n; i++ {
		a, b := want.Raw[i*size:(i+1)*size], got.Raw[i*size:(i+1)*size]
		if !bytes.Equal(a, b) {
			r.add(Mismatch{Tensor: want.Name, Index: i, Expected: formatInt(want.DataType, a), Got: formatInt(want.DataType, b)}, opts.MaxReported)
		}
	}
}

func formatInt(dt tensor.DataType, raw []byte) string {
	if dt == tensor.UINT64 {
		v, _ := tensor.ToUint64s(dt, raw)
		return strconv.FormatUint(v[0], 10)
	}
	if dt == tensor.BOOL {
		return strconv.FormatBool(raw[0] != 0)
	}
	v, _ := tensor.ToInt64s(dt, raw)
	return strconv.FormatInt(v[0], 10)
}

func compareBytes(r *Result, want, got tensor.Tensor, opts Options) {
	w, _ := tensor.BytesElements(want.Raw)
	g, _ := tensor.BytesElements(got.Raw)
	r.Checked += len(w)
	for i := range w {
		if !bytes.Equal(w[i], g[i]) {
			r.add(Mismatch{Tensor: want.Name, Index: i, Expected: quote(w[i]), Got: quote(g[i])}, opts.MaxReported)
		}
	}
}

// quote shows a BYTES element, cut so one huge element cannot flood a report.
func quote(b []byte) string {
	const max = 64
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}
