//go:build linux

package shm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateWriteReopen(t *testing.T) {
	key := NewKey("test_" + t.Name())
	r, err := Create(key, 4096)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { r.Close(); r.Unlink() })
	copy(r.Bytes(), "hello")
	// The server side opens the same file by key; reading it proves sharing.
	got, err := os.ReadFile(filepath.Join(Dir, key[1:]))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4096 || string(got[:5]) != "hello" {
		t.Fatalf("file holds %d bytes starting %q", len(got), got[:5])
	}
	if _, err := Create(key, 16); err == nil {
		t.Fatal("second Create with the same key succeeded; want O_EXCL failure")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Unlink(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(Dir, key[1:])); !os.IsNotExist(err) {
		t.Fatalf("object still present after Unlink: %v", err)
	}
}

// Open is the server's side: a window at an offset that is not
// page-aligned sees what the creator wrote there, and writes through it
// reach the creator.
func TestOpenSharesAWindow(t *testing.T) {
	key := NewKey("test_" + t.Name())
	r, err := Create(key, 3*4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); r.Unlink() })
	copy(r.Bytes()[5000:], "window")
	w, err := Open(key, 5000, 100)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if w.Size() != 100 || string(w.Bytes()[:6]) != "window" {
		t.Fatalf("window holds %d bytes starting %q", w.Size(), w.Bytes()[:6])
	}
	copy(w.Bytes()[10:], "back")
	if string(r.Bytes()[5010:5014]) != "back" {
		t.Fatalf("creator sees %q", r.Bytes()[5010:5014])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, tc := range []struct {
		key          string
		offset, size uint64
		want         string
	}{
		{key, 3 * 4096, 1, "exceeds"},
		{key, 4096, 2*4096 + 1, "exceeds"},
		{key, 0, 0, "must be positive"},
		{NewKey("absent"), 0, 1, "no such file"},
		{"/a/b", 0, 1, "single path component"},
	} {
		if w, err := Open(tc.key, tc.offset, tc.size); err == nil || !strings.Contains(err.Error(), tc.want) {
			if w != nil {
				w.Close()
			}
			t.Errorf("Open(%q, %d, %d) = %v, want an error containing %q", tc.key, tc.offset, tc.size, err, tc.want)
		}
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		key  string
		size int
	}{
		{"", 10}, {"/", 10}, {"/a/b", 10}, {"..", 10}, {NewKey("zero"), 0},
	} {
		if r, err := Create(tc.key, tc.size); err == nil {
			r.Close()
			r.Unlink()
			t.Errorf("Create(%q, %d) succeeded", tc.key, tc.size)
		}
	}
}

func TestCleanupStale(t *testing.T) {
	// pid 0x7ffffffe is above Linux's pid_max, so it cannot be running.
	dead := Prefix + "2147483646_cleanuptest"
	mine := NewKey("cleanuptest")[1:]
	for _, n := range []string{dead, mine} {
		if err := os.WriteFile(filepath.Join(Dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(filepath.Join(Dir, n)) })
	}
	removed, err := CleanupStale(Prefix)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range removed {
		if n == mine {
			t.Errorf("removed a live process's object %s", n)
		}
		found = found || n == dead
	}
	if !found {
		t.Errorf("dead object %s not removed (removed %v)", dead, removed)
	}
	if _, err := CleanupStale("other_"); err == nil {
		t.Error("CleanupStale accepted a prefix outside perfscen_")
	}
}
