package testbin

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary's build must carry -race exactly when the tests do, and the
// built binary must say so in its build info.
func TestBuildMatchesRace(t *testing.T) {
	if got := slices.Contains(buildArgs("x"), "-race"); got != raceEnabled {
		t.Fatalf("build args %v: -race %v, tests run with race %v", buildArgs("x"), got, raceEnabled)
	}
	out, err := exec.Command("go", "version", "-m", Perfscen(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if got := strings.Contains(string(out), "-race=true"); got != raceEnabled {
		t.Errorf("binary built with race %v, tests run with race %v:\n%s", got, raceEnabled, out)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}
