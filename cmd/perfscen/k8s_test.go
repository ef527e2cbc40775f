package main

import (
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
		{[]string{"k8s", "--agents", "2", sc}, 2, "--image: the perfscen container image is required"},
		{[]string{"k8s", "--agents", "2", "--image", "i", "--include", filepath.Join(dir, "missing.json"), sc}, 2, "missing.json: no such file"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runAtRoot(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.out) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.out, stdout, stderr)
		}
	}
}
