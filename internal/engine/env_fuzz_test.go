package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// cpuIdentity reads whatever /proc/cpuinfo a kernel or hypervisor
// writes, and its answer goes into the derived testbed id and the
// baseline file: it must never panic, and must be one line, the same
// for the same file, and empty only when no identifying field was found.
func FuzzCPUIdentity(f *testing.F) {
	for _, p := range []string{"testdata/cpu-epyc/cpuinfo", "testdata/cpu-arm/cpuinfo"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("model\t: \n\nmodel : 1\n"))
	f.Add([]byte("vendor_id:x\nvendor_id:y\n"))
	f.Add([]byte("vendor_id: a\rb\x00c\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "cpuinfo")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := cpuIdentity(p, filepath.Join(dir, "no-caches"))
		if strings.ContainsFunc(got, unicode.IsControl) {
			t.Fatalf("identity holds control characters: %q", got)
		}
		if again := cpuIdentity(p, filepath.Join(dir, "no-caches")); again != got {
			t.Fatalf("identity not stable: %q then %q", got, again)
		}
		for _, k := range cpuIdentityKeys {
			if strings.Contains(got, k+"=") {
				return
			}
		}
		if got != "" {
			t.Fatalf("identity %q names no identifying field", got)
		}
	})
}
