package paramkv

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApplySortedAndWrapped(t *testing.T) {
	var seen []string
	kv := map[string]string{"c": "3", "a": "1", "b": "bad", "d": "4"}
	err := Apply(kv, func(k, v string) error {
		seen = append(seen, k)
		if v == "bad" {
			return errors.New("not a number")
		}
		return nil
	})
	if strings.Join(seen, "") != "ab" {
		t.Errorf("keys applied %v, want a then b (sorted, stopping at the error)", seen)
	}
	if err == nil || err.Error() != `parameter "b": not a number` {
		t.Errorf("err = %v", err)
	}
}

func TestCheckStall(t *testing.T) {
	for _, tc := range []struct {
		every, stall time.Duration
		ok           bool
	}{
		{0, time.Second, true}, // no stalls
		{time.Second, 999 * time.Millisecond, true},
		{time.Second, time.Second, false},
		{time.Second, 2 * time.Second, false},
	} {
		if err := CheckStall(tc.every, tc.stall); (err == nil) != tc.ok {
			t.Errorf("CheckStall(%v, %v) = %v", tc.every, tc.stall, err)
		}
	}
}

func TestFraction(t *testing.T) {
	for v, ok := range map[string]bool{"0": true, "1": true, "0.25": true, "-0.1": false, "1.5": false, "NaN": false, "x": false} {
		if _, err := Fraction(v); (err == nil) != ok {
			t.Errorf("Fraction(%q) = %v", v, err)
		}
	}
}
