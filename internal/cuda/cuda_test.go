//go:build linux

package cuda

import (
	"strings"
	"testing"
)

// Without the runtime library (here: a name that cannot exist), Load
// says what it tried and how to point it at the library.
func TestLoadNamesWhatIsMissing(t *testing.T) {
	t.Setenv(EnvLibrary, "/nonexistent/libcudart.so")
	_, err := load()
	if err == nil {
		t.Fatal("loaded a library that does not exist")
	}
	for _, want := range []string{"/nonexistent/libcudart.so", EnvLibrary, "not on this machine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}

// On this machine: either a GPU is usable (and then a buffer round-trips
// through device memory and yields an IPC handle) or Load says why not.
func TestLoadHere(t *testing.T) {
	r, err := Load()
	if err != nil {
		t.Logf("no CUDA here: %v", err)
		return
	}
	b, err := r.Malloc(0, 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	in := []byte(strings.Repeat("perfscen", 128))
	if err := b.Write(0, in); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(in))
	if err := b.Read(out); err != nil || string(out) != string(in) {
		t.Fatalf("round trip: %v", err)
	}
	if h, err := b.IPCHandle(); err != nil || len(h) != IPCHandleSize {
		t.Fatalf("IPC handle %x: %v", h, err)
	}
}
