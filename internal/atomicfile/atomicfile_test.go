package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "out.json") // parents are created
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Fatalf("content %q, %v", got, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644 (the last write's)", st.Mode().Perm(), err)
	}
	assertNoTemp(t, filepath.Dir(path))
}

// A write that cannot finish leaves the old content and no temp file.
func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := Write(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory where the file should go: the rename fails.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(blocked, []byte("new"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "writing "+blocked) {
		t.Fatalf("err = %v, want one naming %s", err, blocked)
	}
	assertNoTemp(t, dir)
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("other file changed: %q", got)
	}
	// A parent that is a file: nothing can be created under it.
	if err := Write(filepath.Join(path, "child"), []byte("x"), 0o644); err == nil {
		t.Fatal("wrote under a regular file")
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("content after a failed write: %q", got)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left a temp file: %s", e.Name())
		}
	}
}

// A writer that fails part way leaves the old file and no temp file.
func TestWriteWithFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := Write(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	assertNoTemp(t, dir)
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("content after a failed write: %q", got)
	}
}
