package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Builds that name their source exactly are compared by version; two
// builds that do not (unstamped "dev", modified trees) are told apart by
// their executables, and the same executable on two hosts agrees.
func TestFleetIdentity(t *testing.T) {
	dir := t.TempDir()
	one := writeFile(t, filepath.Join(dir, "one"), "a build of perfscen")
	copyOfOne := writeFile(t, filepath.Join(dir, "copy"), "a build of perfscen")
	other := writeFile(t, filepath.Join(dir, "other"), "another build of perfscen")
	at := func(path string) func() (string, error) { return func() (string, error) { return path, nil } }
	id := func(v versionInfo, exe func() (string, error)) string {
		t.Helper()
		s, err := fleetIdentity(v, exe)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	noExe := func() (string, error) { t.Fatal("a release build read its executable"); return "", nil }
	for _, v := range []versionInfo{{Version: "v1.4.0"}, {Version: "v1.4.0", Revision: "abc"}, {Version: "dev", Revision: "0123456789abcdef"}} {
		if got := id(v, noExe); got != v.String() {
			t.Errorf("%+v: %q, want %q", v, got, v.String())
		}
	}
	for _, v := range []versionInfo{
		{Version: "dev"},
		{Version: "dev", Revision: "0123456789abcdef", Modified: true},
		{Version: "v1.4.0-3-g0123456-dirty", Modified: true},
		{Version: "v1.4.0-3-g0123456-dirty"},
	} {
		a, b, c := id(v, at(one)), id(v, at(copyOfOne)), id(v, at(other))
		if a != b || a == c || !strings.HasPrefix(a, v.String()+"+build.") {
			t.Errorf("%+v: same binary %q and %q, another %q", v, a, b, c)
		}
	}
	if _, err := fleetIdentity(versionInfo{Version: "dev"}, func() (string, error) { return "", errors.New("no /proc") }); err == nil ||
		!strings.Contains(err.Error(), "identifying this dev build for its agents: no /proc") {
		t.Errorf("err %v", err)
	}
}
