package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A machine with ../shared/torchserve but without its Debian runtime
// skips the real-TorchServe tests naming what to install (the tests
// failed the README's test command before: "missing
// /usr/share/java/netty-buffer.jar"). The jars come from the script's own
// list, so a new jar in a new TorchServe folder is checked too.
func TestTorchServeRuntimeMissing(t *testing.T) {
	dir, java := t.TempDir(), t.TempDir()
	script := "#!/bin/bash\nSYSJARS=\"\nnetty-buffer libnetty-java\nnetty-codec libnetty-java\nguava libguava-java\n\"\nexec java\n"
	if err := os.WriteFile(filepath.Join(dir, "run-torchserve"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(java, "guava.jar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noJava := func(string) (string, error) { return "", errors.New("not found") }
	stat := func(p string) (os.FileInfo, error) {
		if p == "/usr/bin/java" {
			return nil, os.ErrNotExist
		}
		return os.Stat(p)
	}
	modules := map[string]bool{"torch": true, "psutil": false, "yaml": true}
	got := torchserveMissing(dir, java, stat, noJava, func(m string) bool { return modules[m] })
	want := []string{"openjdk-17-jre-headless", "libnetty-java", "python3-psutil"}
	if !slices.Equal(got, want) {
		t.Errorf("missing %q, want %q", got, want)
	}
	// Everything there: nothing to install.
	for _, jar := range []string{"netty-buffer", "netty-codec"} {
		if err := os.WriteFile(filepath.Join(java, jar+".jar"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	haveJava := func(string) (string, error) { return "/opt/jdk/bin/java", nil }
	if got := torchserveMissing(dir, java, stat, haveJava, func(string) bool { return true }); len(got) != 0 {
		t.Errorf("missing %q on a complete machine", got)
	}
}
