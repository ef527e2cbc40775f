//go:build linux

package tritoncapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/kinds/tritoncapi"
	"github.com/perfscen/perfscen/runner"
	"github.com/perfscen/perfscen/scenario"
)

// fakeLibEnv names, in a child test process, the stand-in library it
// opens. The stand-in is dlopened with RTLD_GLOBAL as the real library
// is, so it would lend its stubs to a real Triton's backends loaded later
// in the same process; each stand-in is opened in a process of its own.
const fakeLibEnv = "PERFSCEN_TEST_FAKE_TRITON_LIBRARY"

// fakeLibChild runs a C API scenario on the stand-in library named by
// fakeLibEnv and exits as perfscen would: 2 for the scenario's mistake,
// 3 otherwise, with the error on stdout.
func fakeLibChild(lib string) int {
	dir, err := os.MkdirTemp("", "perfscen-fakelib-")
	if err != nil {
		fmt.Println(err)
		return 3
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.yaml")
	body := "version: 1\nname: fake\nserver:\n  kind: triton_c_api\n  triton_c_api:\n    library: " + lib +
		"\n    model_repository: " + dir + "\nmodels:\n  - name: identity_fp32\nload:\n  mode: iterations\n  iterations: 2\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		fmt.Println(err)
		return 3
	}
	p, err := scenario.LoadPlan(path, os.Getenv)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	_, err = runner.Run(context.Background(), p, runner.Options{})
	fmt.Println(err)
	switch {
	case err == nil:
		return 0
	case failure.KindOf(err) == failure.InvalidInput:
		return 2
	default:
		return 3
	}
}

// fakeLibrary builds, with the C compiler, a shared library exporting
// every function perfscen looks up, as stubs, and a
// TRITONSERVER_ApiVersion that reports major.minor.
func fakeLibrary(t *testing.T, cc string, major, minor int) string {
	t.Helper()
	dir := t.TempDir()
	var src strings.Builder
	fmt.Fprintf(&src, "void *TRITONSERVER_ApiVersion(unsigned *major, unsigned *minor) { *major = %d; *minor = %d; return 0; }\n", major, minor)
	for _, name := range tritoncapi.Symbols {
		if name != "TRITONSERVER_ApiVersion" {
			fmt.Fprintf(&src, "void *%s(void) { return 0; }\n", name)
		}
	}
	c := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libtritonserver.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	return so
}

// A library with every function but another C API version is refused
// before any server starts: exit 2, naming both versions.
func TestAPIVersionMismatch(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			fmt.Println("SKIP: TestAPIVersionMismatch: no C compiler (cc, gcc) to build a stand-in libtritonserver.so; the C API version check is not tested")
			t.Skip("no C compiler")
		}
	}
	want := fmt.Sprintf("perfscen needs %d.%d or a later %d.x", tritoncapi.APIMajor, tritoncapi.APIMinor, tritoncapi.APIMajor)
	for _, v := range [][2]int{{tritoncapi.APIMajor, tritoncapi.APIMinor - 1}, {tritoncapi.APIMajor + 1, 0}, {0, 99}} {
		t.Run(fmt.Sprintf("%d.%d", v[0], v[1]), func(t *testing.T) {
			lib := fakeLibrary(t, cc, v[0], v[1])
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fakeLibEnv+"="+lib)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			have := fmt.Sprintf("has Triton C API %d.%d", v[0], v[1])
			if code != 2 || !strings.Contains(out.String(), have) || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), lib) {
				t.Errorf("exit %d, want 2 naming %s, %q and %q:\n%s", code, lib, have, want, out.String())
			}
		})
	}
}
