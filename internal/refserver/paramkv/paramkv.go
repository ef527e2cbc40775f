// Package paramkv applies model parameters given as key=value strings
// (--model-param, refserver.Options.ModelParams), with the same rules for
// the reference server's models and its simulated LLM engines: keys apply
// in sorted order so an error names the same key every time, and a stall
// must be shorter than its period.
package paramkv

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Keys both kinds of model take.
const (
	StallEvery = "stall_every" // period of stalls (duration, 0 = off)
	StallFor   = "stall_for"   // stall length inside each period (duration)
)

// Apply calls set for every key of kv in sorted order and wraps the first
// error with its key.
func Apply(kv map[string]string, set func(key, value string) error) error {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := set(k, kv[k]); err != nil {
			return fmt.Errorf("parameter %q: %w", k, err)
		}
	}
	return nil
}

// CheckStall refuses a stall that lasts its whole period or longer: the
// model would never answer.
func CheckStall(every, stallFor time.Duration) error {
	if every > 0 && stallFor >= every {
		return fmt.Errorf("parameter %q: %v must be shorter than %s %v", StallFor, stallFor, StallEvery, every)
	}
	return nil
}

// Fraction parses a share in [0, 1].
func Fraction(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, err
	}
	if !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("%q is not a fraction in [0, 1]", v)
	}
	return f, nil
}
