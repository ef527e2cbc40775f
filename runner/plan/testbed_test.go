package plan

import (
	"strings"
	"testing"
)

func TestCheckTestbedName(t *testing.T) {
	for _, ok := range []string{"ci-gpu-a10", "hw-0123456789ab", "Runner.7_x"} {
		if err := CheckTestbedName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "a b", "a/b", strings.Repeat("a", 65)} {
		if CheckTestbedName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
