package kinds

import (
	"github.com/perfscen/perfscen/internal/tensor"
	"github.com/perfscen/perfscen/validate"
)

// CompareTensors checks a reply's outputs against the step's expected ones
// with the model's float tolerance, as every tensor kind does; "" when
// they match, else the first difference.
func CompareTensors(expected, got []tensor.Tensor, tolerance float64) string {
	r := validate.Compare(Public(expected), Public(got), validate.Options{FloatTolerance: tolerance, MaxReported: 1})
	if r.OK() {
		return ""
	}
	return r.String()
}

// Public converts tensors to the validate package's form; the data is
// shared, not copied.
func Public(ts []tensor.Tensor) []validate.Tensor {
	out := make([]validate.Tensor, len(ts))
	for i, t := range ts {
		out[i] = validate.Tensor{Name: t.Name, DataType: string(t.DataType), Shape: t.Shape, Data: t.Raw}
	}
	return out
}
