// Package testbin builds the perfscen command once per test process for
// tests that need a real process (exit status, signals, two updaters at
// once).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Perfscen returns the path of a freshly built perfscen binary, building it
// on first use so fuzz workers and tests that never need it don't pay.
func Perfscen(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if dir, err = os.MkdirTemp("", "perfscen-bin-"); err != nil {
			return
		}
		path = filepath.Join(dir, "perfscen")
		if out, berr := exec.Command("go", buildArgs(path)...).CombinedOutput(); berr != nil {
			err = fmt.Errorf("building perfscen: %v\n%s", berr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// buildArgs are the go command's arguments for the binary: with -race
// when this test binary has it (see raceEnabled).
func buildArgs(out string) []string {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	return append(args, "github.com/perfscen/perfscen/cmd/perfscen")
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
