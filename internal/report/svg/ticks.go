package svg

import (
	"math"

	"github.com/perfscen/perfscen/internal/numfmt"
)

// Axis is a linear scale over [Min, Max] with ticks Step apart; Min and
// Max are themselves ticks, so the last label is never cut off by the
// data's end.
type Axis struct {
	Min, Max, Step float64
	// Log scales by the logarithm, with ticks at 1, 2 and 5 times powers
	// of ten (ratios: a halving and a doubling the same length).
	Log bool
}

// LogAxis covers [lo, hi] (both positive) on a log scale from and to a
// tick of the 1-2-5 sequence.
func LogAxis(lo, hi float64) Axis {
	seq := func(v float64, up bool) float64 {
		mag := math.Pow(10, math.Floor(math.Log10(v)))
		steps := []float64{1, 2, 5, 10}
		if up {
			for _, f := range steps {
				if f*mag >= v*(1-1e-9) {
					return f * mag
				}
			}
		}
		for i := len(steps) - 1; i >= 0; i-- {
			if steps[i]*mag <= v*(1+1e-9) {
				return steps[i] * mag
			}
		}
		return mag
	}
	return Axis{Min: seq(lo, false), Max: seq(hi, true), Log: true}
}

// IntAxis is NiceAxis for counts (window numbers): whole steps only.
func IntAxis(lo, hi float64, target int) Axis {
	a := NiceAxis(lo, hi, target)
	if a.Step < 1 || a.Step != math.Trunc(a.Step) {
		step := math.Max(1, math.Ceil(a.Step))
		if step == 3 || step == 4 {
			step = 5
		}
		a = Axis{Min: math.Floor(lo/step) * step, Max: math.Ceil(hi/step) * step, Step: step}
		if a.Max <= a.Min {
			a.Max = a.Min + step
		}
	}
	return a
}

// NiceAxis covers [lo, hi] with about target ticks at 1, 2, 2.5 or 5
// times a power of ten.
func NiceAxis(lo, hi float64, target int) Axis {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		pad := math.Max(math.Abs(hi)*0.1, 1e-9)
		if hi == 0 {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
		if lo < 0 && hi-pad >= 0 {
			lo = 0
		}
	}
	step := niceStep((hi - lo) / float64(max(target, 1)))
	a := Axis{Min: math.Floor(lo/step+1e-9) * step, Max: math.Ceil(hi/step-1e-9) * step, Step: step}
	if a.Max <= a.Min {
		a.Max = a.Min + step
	}
	return a
}

func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 2.5, 5} {
		if raw <= f*mag*(1+1e-9) {
			return f * mag
		}
	}
	return 10 * mag
}

// Ticks are the tick values from Min to Max.
func (a Axis) Ticks() []float64 {
	if a.Log {
		var out []float64
		for mag := math.Pow(10, math.Floor(math.Log10(a.Min))); mag <= a.Max; mag *= 10 {
			for _, f := range []float64{1, 2, 5} {
				if v := f * mag; v >= a.Min*(1-1e-9) && v <= a.Max*(1+1e-9) {
					out = append(out, v)
				}
			}
		}
		return out
	}
	n := int(math.Round((a.Max - a.Min) / a.Step))
	out := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		v := a.Min + float64(i)*a.Step
		if math.Abs(v) < a.Step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// Label renders a tick value with as many decimals as the step needs.
func (a Axis) Label(v float64) string {
	if a.Log {
		return numfmt.Significant(v, 2)
	}
	dec := 0
	for s := a.Step; dec < 9 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, a.Step); s *= 10 {
		dec++
	}
	return numfmt.Decimal(v, dec)
}

// Scale maps v on the axis to the pixel range [p0, p1].
func (a Axis) Scale(v, p0, p1 float64) float64 {
	if a.Log {
		v = math.Max(v, a.Min*1e-3)
		return p0 + math.Log(v/a.Min)/math.Log(a.Max/a.Min)*(p1-p0)
	}
	return p0 + (v-a.Min)/(a.Max-a.Min)*(p1-p0)
}
