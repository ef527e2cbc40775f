package scenario

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var durationRE = regexp.MustCompile(`^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))+$`)

// ParseDuration parses a non-negative duration with units (500ms, 5s,
// 1m30s). A bare number is refused: perf_analyzer's flags are in ms and a
// scenario's in seconds would be an easy, silent 1000× mistake.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if !durationRE.MatchString(t) {
		return 0, fmt.Errorf("%q is not a duration (examples: 500ms, 5s)", s)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (examples: 500ms, 5s): %w", s, errors.Unwrap(err))
	}
	return d, nil
}

var percentRE = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?%$`)

// ParsePercent parses "10%" into 10. signed allows a leading + or -.
func ParsePercent(s string, signed bool) (float64, error) {
	t := strings.TrimSpace(s)
	example := "10%, 2.5%"
	if signed {
		example = "-5%, +10%"
	}
	if !percentRE.MatchString(t) || (!signed && (t[0] == '+' || t[0] == '-')) {
		return 0, fmt.Errorf("%q is not a percentage (examples: %s)", s, example)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage (examples: %s)", s, example)
	}
	return v, nil
}

var sizeRE = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?) ?(B|KB|MB|GB|KiB|MiB|GiB)?$`)

var sizeUnits = map[string]float64{
	"": 1, "B": 1,
	"KB": 1e3, "MB": 1e6, "GB": 1e9,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
}

// ParseSize parses a positive byte count: 102400, 64KiB, 1.5MB.
func ParseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (examples: 102400, 64KiB, 1MiB)", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (examples: 102400, 64KiB, 1MiB)", s)
	}
	b := v * sizeUnits[m[3]]
	if b < 1 || b > math.MaxInt64/2 || b != math.Trunc(b) {
		return 0, fmt.Errorf("size %q must be a whole number of bytes between 1 and 2^62", s)
	}
	return int64(b), nil
}

// maxRangeLen bounds a range so a typo (1:1000000) fails at load instead of
// planning a run of a million points.
const maxRangeLen = 10000

// ParseRange parses an inclusive range "start:end[:step]" as
// perf_analyzer's --concurrency-range does: 8:128:8 is 8, 16, …, 128.
func ParseRange(s string) ([]float64, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%q is not a range (start:end:step, e.g. 8:128:8)", s)
	}
	nums := make([]float64, 3)
	nums[2] = 1
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a range (start:end:step, e.g. 8:128:8): %q is not a number", s, p)
		}
		nums[i] = v
	}
	start, end, step := nums[0], nums[1], nums[2]
	switch {
	case start <= 0:
		return nil, fmt.Errorf("range %q: start must be > 0", s)
	case step <= 0:
		return nil, fmt.Errorf("range %q: step must be > 0", s)
	case end < start:
		return nil, fmt.Errorf("range %q is empty: end %v is below start %v", s, end, start)
	}
	// The epsilon keeps 0.1:0.3:0.1 at three values despite rounding.
	n := math.Floor((end-start)/step+1e-9) + 1
	if n > maxRangeLen {
		return nil, fmt.Errorf("range %q has %.0f values; at most %d are allowed", s, n, maxRangeLen)
	}
	out := make([]float64, int(n))
	for i := range out {
		out[i] = roundTo(start+float64(i)*step, 1e9)
	}
	return out, nil
}

func roundTo(v, scale float64) float64 { return math.Round(v*scale) / scale }

// parseInts resolves a sweep value list of positive integers: a single
// range string or a list of integers.
func parseInts(l StringList) ([]int, error) {
	fs, err := parseNumbers(l)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(fs))
	for i, f := range fs {
		if f != math.Trunc(f) || f > math.MaxInt32 {
			return nil, fmt.Errorf("%v is not a positive integer", f)
		}
		out[i] = int(f)
	}
	return out, nil
}

// parseNumbers resolves a sweep value list of positive numbers.
func parseNumbers(l StringList) ([]float64, error) {
	if len(l) == 1 && strings.Contains(l[0], ":") {
		return ParseRange(l[0])
	}
	if len(l) == 0 {
		return nil, errors.New("must list at least one value")
	}
	out := make([]float64, 0, len(l))
	seen := map[float64]bool{}
	for _, s := range l {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if v <= 0 {
			return nil, fmt.Errorf("%v must be > 0", v)
		}
		if seen[v] {
			return nil, fmt.Errorf("%v is listed twice", v)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}

// formatNumber is the canonical text of a coordinate value: 250, 12.5.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
