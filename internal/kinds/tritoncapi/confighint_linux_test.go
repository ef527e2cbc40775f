//go:build linux

package tritoncapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A model whose config.pbtxt Triton cannot read fails to load with
// "failed to poll from model repository" and the parser's reason on
// Triton's own stderr; the exit-2 message now carries the reason, read
// as Triton reads the file. A valid configuration (every one of the real
// Triton's example models) gets no hint.
func TestConfigHint(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.pbtxt")
	if err := os.WriteFile(bad, []byte("name: \"m\"\nbackend: \"identity\"\nmax_bach_size: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if h := configHint(bad); !strings.Contains(h, "unknown field: max_bach_size") || !strings.Contains(h, "line 3") {
		t.Errorf("hint %q", h)
	}
	shared := filepath.Join("..", "..", "..", "..", "shared", "triton", "models")
	configs, _ := filepath.Glob(filepath.Join(shared, "*", "config.pbtxt"))
	if len(configs) < 5 {
		t.Log("no ../shared/triton models beside the checkout: the valid-configuration half did not run")
	}
	for _, c := range configs {
		if h := configHint(c); h != "" {
			t.Errorf("a valid configuration is blamed: %s", h)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	if h := repositoryHint(dir, "nosuch", nil); !strings.Contains(h, "the repository holds no folder nosuch, its models: m") {
		t.Errorf("missing folder: %q", h)
	}
}
