package validate

import (
	"math"

	"github.com/perfscen/perfscen/internal/tensor"
)

// Options tune Compare. The zero value gives the defaults.
type Options struct {
	// FloatTolerance bounds |expected-got| both absolutely and relative to
	// the smaller magnitude: values match when the difference is within
	// max(tol, tol·min(|e|,|g|)). Zero means DefaultFloatTolerance. FP16
	// and BF16 never use less than their own floor (a couple of ULPs at
	// 1.0), since a tighter bound cannot be met after rounding.
	FloatTolerance float64
	// MaxReported caps Result.First (default 5).
	MaxReported int
}

// Defaults, chosen from the unit roundoff of each format.
const (
	DefaultFloatTolerance = 1e-5
	FP16Tolerance         = 2e-3   // 2 ULPs of FP16 at 1.0 (2^-10 each)
	BF16Tolerance         = 1.6e-2 // 2 ULPs of BF16 at 1.0 (2^-7 each)
	DefaultMaxReported    = 5
)

func (o Options) withDefaults() Options {
	if o.FloatTolerance <= 0 {
		o.FloatTolerance = DefaultFloatTolerance
	}
	if o.MaxReported <= 0 {
		o.MaxReported = DefaultMaxReported
	}
	return o
}

// Tolerance is the bound Compare applies to a float datatype.
func (o Options) Tolerance(dataType string) float64 {
	dt := tensor.DataType(dataType)
	tol := o.withDefaults().FloatTolerance
	switch dt {
	case tensor.FP16:
		return math.Max(tol, FP16Tolerance)
	case tensor.BF16:
		return math.Max(tol, BF16Tolerance)
	}
	return tol
}
