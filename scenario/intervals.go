package scenario

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// maxIntervals bounds a schedule file: a typo (a log file named instead)
// must not hold millions of entries in every plan.
const maxIntervals = 1 << 20

// ReadIntervals reads perf_analyzer's --request-intervals file: the time
// between consecutive sends in microseconds, one whole number a line,
// replayed in a loop. Blank lines are skipped; anything else that is not
// a whole number is an error at its line. At least one interval must be
// above zero, or the schedule would send without end at one instant.
func ReadIntervals(path string) ([]time.Duration, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseIntervals(path, src)
}

// ParseIntervals is ReadIntervals on a file's contents; name is used in
// messages.
func ParseIntervals(name string, src []byte) ([]time.Duration, error) {
	var out []time.Duration
	var total time.Duration
	for i, line := range strings.Split(string(src), "\n") {
		f := strings.TrimSpace(line)
		if f == "" {
			continue
		}
		us, err := strconv.ParseUint(f, 10, 64)
		if err != nil || us > uint64(time.Hour/time.Microsecond) {
			return nil, fmt.Errorf("%s:%d: %q is not an interval in whole microseconds (0 to 3600000000)", name, i+1, f)
		}
		if len(out) == maxIntervals {
			return nil, fmt.Errorf("%s:%d: more than %d intervals", name, i+1, maxIntervals)
		}
		d := time.Duration(us) * time.Microsecond
		out = append(out, d)
		total += d
	}
	switch {
	case len(out) == 0:
		return nil, fmt.Errorf("%s: no intervals (one number of microseconds a line)", name)
	case total <= 0:
		return nil, fmt.Errorf("%s: every interval is 0: the schedule would send without end at one instant", name)
	}
	return out, nil
}

// IntervalsRate is a schedule's mean rate: sends per second over one pass
// of the intervals.
func IntervalsRate(iv []time.Duration) float64 {
	var total time.Duration
	for _, d := range iv {
		total += d
	}
	if total <= 0 {
		return 0
	}
	return float64(len(iv)) / total.Seconds()
}
