package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/runner/result"
)

// perfscen's defaults against a plain KServe v2 server (no extensions,
// JSON tensors only): every request succeeds, over both protocols, with a
// batch dimension taken from the metadata.
const plainScenario = `version: 1
server:
  embedded: true
  embedded_flavor: kserve
  timeout: 5s
models:
  - name: simple
    batch_size: 2
  - name: identity_fp16
    shapes: {INPUT0: [8]}
sweep:
  protocol: [http, grpc]
load:
  mode: iterations
  iterations: 30
thresholds:
  - errors == 0
`

func TestRunPlainKServeDefaults(t *testing.T) {
	dir := t.TempDir()
	sc := writeScenario(t, dir, "plain.yaml", plainScenario)
	out := filepath.Join(dir, "res.json")
	code, stdout, stderr := runCLI(t, "run", sc, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	run, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 4 {
		t.Fatalf("%d points, want 4", len(run.Points))
	}
	for _, p := range run.Points {
		if p.Summary.Requests != 30 || p.Errors.Count != 0 {
			t.Errorf("%s: %d requests, %d errors (%v); want 30 and none", p.ID, p.Summary.Requests, p.Errors.Count, p.Errors.First)
		}
		if p.Model == "simple" && p.BatchSize != 2 {
			t.Errorf("%s: batch %d, want 2", p.ID, p.BatchSize)
		}
	}
	if len(run.Notes) != 2 || !strings.Contains(strings.Join(run.Notes, "\n"), "statistics") {
		t.Errorf("notes = %q, want one for statistics and one for model configuration", run.Notes)
	}
	if strings.Count(stdout, "Note: ") != 2 {
		t.Errorf("console shows the notes %d times, want 2:\n%s", strings.Count(stdout, "Note: "), stdout)
	}
}

// What the scenario needs and the plain server lacks is exit 2 before any
// load, naming the extension.
func TestRunPlainKServeMissingExtension(t *testing.T) {
	const head = "version: 1\nserver: {embedded: true, embedded_flavor: kserve%s}\n"
	cases := []struct{ name, server, rest, want string }{
		{"statistics", "", "models: [{name: simple}]\nthresholds: [\"server_queue < 1ms\"]\n",
			`threshold "server_queue < 1ms" needs the statistics extension`},
		{"shm", "", "models: [{name: simple}]\nload: {shared_memory: system}\n", "needs the system_shared_memory extension"},
		{"binary", ", tensor_format: binary", "models: [{name: simple}]\n", "needs the binary_tensor_data extension"},
		{"sequence", "", "models: [{name: accumulate, sequence: true}]\n", "needs the sequence extension"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			body := strings.Replace(head, "%s", tc.server, 1) + tc.rest
			sc := writeScenario(t, dir, "s.yaml", body)
			code, stdout, stderr := runCLI(t, "run", sc, "--out", filepath.Join(dir, "res.json"))
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 2 with %q\nscenario:\n%s\nstdout:\n%s\nstderr:\n%s", code, tc.want, body, stdout, stderr)
			}
		})
	}
}
