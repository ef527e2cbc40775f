package main

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites golden files: go test ./cmd/perfscen -update
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (go test -update writes it): %v", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s mismatch (-want +got); go test -update if intended:\n%s", path, d)
	}
}
