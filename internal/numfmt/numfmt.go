// Package numfmt renders figures for people, one way everywhere perfscen
// prints a value or a bound: console, Markdown, HTML, JUnit, GitHub
// annotations and the checks' own messages. Latencies carry their unit
// (µs, ms, s), rates theirs, fractions are percentages; no raw
// microseconds and never scientific notation, so a bound in a message is
// the bound in the table, character for character.
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Value renders v in unit, one of the metric catalogue's units ("us",
// "infer/s", "tokens/s", "req/s", "count", "fraction", "ratio") or any
// other, which is appended after the number.
func Value(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	switch unit {
	case "us":
		return Micros(v)
	case "infer/s", "tokens/s", "req/s":
		return Decimal(v, 1) + " " + unit
	case "count":
		if v == math.Trunc(v) {
			return Decimal(v, 0)
		}
		return Decimal(v, 1)
	case "fraction":
		return Decimal(100*v, 2) + "%"
	case "", "ratio", "x":
		return Decimal(v, 3)
	}
	return Significant(v, 4) + " " + unit
}

// Micros renders a duration given in microseconds: µs below a
// millisecond, ms (two decimals) below a second, s (three) beyond.
func Micros(us float64) string {
	switch a := math.Abs(us); {
	case math.IsNaN(us):
		return "n/a"
	case a < 1000:
		return Decimal(us, 0) + "µs"
	case a < 1e6:
		return Decimal(us/1e3, 2) + "ms"
	default:
		return Decimal(us/1e6, 3) + "s"
	}
}

// Decimal is v with a fixed number of decimals, never in exponent form.
func Decimal(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		s = s[1:] // a negative zero reads as a sign error
	}
	return s
}

// Significant is v with about digits significant digits, never in
// exponent form: 0.00021, 0.012, 1.5, 3016.
func Significant(v float64, digits int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	mag := int(math.Floor(math.Log10(math.Abs(v))))
	decimals := max(digits-1-mag, 0)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Pct renders a fraction as a percentage with one decimal: 0.123 → 12.3%.
func Pct(f float64) string { return Decimal(100*f, 1) + "%" }

// SignedPct is Pct with its sign always shown: +12.3%, -4.0%.
func SignedPct(f float64) string {
	s := Pct(f)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// Percent renders a fraction as a percentage with up to four significant
// digits and no trailing zeros: an error budget of 0.001 is 0.1%.
func Percent(f float64) string { return Significant(100*f, 4) + "%" }

// MinP is the smallest p-value printed as a number; below it the
// figure is the test's approximation, not a measurement.
const MinP = 0.0001

// P renders a p-value (or a significance level) with two significant
// digits: 0.0012, 0.04, 1; below MinP it says "<0.0001".
func P(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p > 0 && p < MinP:
		return "<" + Significant(MinP, 1)
	}
	return Significant(p, 2)
}

// PEq is P as an equation, "p = 0.0012" or "p < 0.0001", for sentences.
func PEq(name string, p float64) string {
	s := P(p)
	if strings.HasPrefix(s, "<") {
		return name + " < " + s[1:]
	}
	return name + " = " + s
}

// MaxMDE is the largest detectable change printed as a figure: a history
// that cannot detect a doubling (or a halving) supports no gate, and the
// formula's figure beyond it (thousands of percent from two runs) is
// noise about noise.
const MaxMDE = 1.0

// MDE renders a minimum detectable change: "3.0%"; "n/a" when there is
// none; beyond MaxMDE "over 100%", never the raw figure.
func MDE(mde float64) string {
	switch {
	case !(mde > 0):
		return "n/a"
	case mde > MaxMDE:
		return "over 100%"
	}
	return Pct(mde)
}

// HistoryMDE is MDE for a baseline history's detectable change: beyond
// MaxMDE the history supports no gate, and says so: "over 100%
// (uncalibrated)".
func HistoryMDE(mde float64) string {
	s := MDE(mde)
	if mde > MaxMDE {
		s += " (uncalibrated)"
	}
	return s
}

// Ratio renders a ratio of two figures with three decimals: 1.150.
func Ratio(r float64) string { return Decimal(r, 3) }

// Bytes writes a size in binary units, about three significant
// digits: "64 KiB", "1.5 GiB", "61 GiB".
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return Significant(b, 3) + " " + units[i]
}
