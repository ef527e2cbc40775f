package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perfscen k8s checks the scenario as the coordinator would before it
// writes anything, and names what is missing.
func TestK8sCommand(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "load.yaml"), "version: 1\nserver: {url: \"triton.perf.svc:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	local := writeFile(t, filepath.Join(dir, "local.yaml"), "version: 1\nserver: {url: \"127.0.0.1:8000\"}\nmodels: [{name: simple}]\nload: {concurrency: 4}\n")
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"k8s", "--agents", "4", "--image", "reg/perfscen:v1", sc}, 0, "completionMode: Indexed"},
		{[]string{"k8s", "--agents", "4", "--image", "reg/perfscen:v1", local}, 0, "warning: " + local + "'s server 127.0.0.1:8000 is this host's loopback"},
		{[]string{"k8s", "--agents", "5", "--image", "reg/perfscen:v1", sc}, 2, "concurrency 4 is less than the 5 agents"},
		{[]string{"k8s", "--agents", "2", sc}, 0, "image: perfscen:dev\n"},
		{[]string{"k8s", "--agents", "2", sc}, 0, "perfscen: image perfscen:dev: what make image builds"},
		{[]string{"k8s", "--agents", "2", "--image", "i", "--include", filepath.Join(dir, "missing.json"), sc}, 2, "missing.json: no such file"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runAtRoot(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.out) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.out, stdout, stderr)
		}
	}
}

// The default image is the tag make image gives a build of that version.
func TestDefaultImage(t *testing.T) {
	for _, tc := range []struct{ version, image string }{
		{"dev", "perfscen:dev"},
		{"v1.2.0", "perfscen:v1.2.0"},
		{"4da5920-dirty", "perfscen:4da5920-dirty"},
		{"devel-0123456789ab-dirty", "perfscen:devel-0123456789ab-dirty"},
		{"v1.0.0+meta", "perfscen:v1.0.0-meta"},
		{".x", "perfscen:_x"},
		{"", "perfscen:dev"},
	} {
		if got := defaultImage(tc.version); got != tc.image {
			t.Errorf("defaultImage(%q) = %q, want %q", tc.version, got, tc.image)
		}
	}
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "IMAGE     ?= perfscen:$(VERSION)") {
		t.Error("the Makefile's IMAGE is no longer perfscen:$(VERSION): perfscen k8s's default image must follow it")
	}
}
