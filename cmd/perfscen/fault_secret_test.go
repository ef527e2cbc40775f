package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// A header built from an environment variable is a secret: with failing
// requests (whose messages are the likeliest place to echo a request), it
// appears in no output, report or result file.
func TestSecretHeaderNeverWritten(t *testing.T) {
	const token = "tok-9c1f27e4b5a8d6e3-do-not-print"
	t.Setenv("TEST_TOKEN", token)
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			dir := t.TempDir()
			sc := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: secret
server:
  embedded: true
  protocol: `+proto+`
  timeout: 1s
  headers:
    Authorization: "Bearer ${TEST_TOKEN}"
  embedded_models:
    simple:
      error_rate: "0.3"
      drop_rate: "0.05"
models:
  - name: simple
load:
  mode: iterations
  iterations: 60
thresholds:
  - errors == 0
`)
			files := map[string]string{
				"--out": "r.json", "--junit": "j.xml", "--markdown": "r.md", "--html": "r.html", "--csv": "r.csv",
			}
			args := []string{"run", sc}
			for flag, name := range files {
				args = append(args, flag, filepath.Join(dir, name))
			}
			for _, format := range []string{"console", "json"} {
				r := runFault(t, context.Background(), append(args, "--format", format)...)
				if r.code != exitcode.CheckFailed {
					t.Fatalf("want exit 1 (errors == 0 fails), got %s", r)
				}
				for name, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
					if strings.Contains(text, token) || strings.Contains(text, "9c1f27e4b5a8d6e3") {
						t.Errorf("%s (--format %s) shows the token:\n%s", name, format, text)
					}
				}
				for _, name := range files {
					b, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(b), "9c1f27e4b5a8d6e3") {
						t.Errorf("%s holds the token", name)
					}
				}
			}
		})
	}
}

// An in-process run leaves no goroutine behind: servers, clients,
// sessions and scrapers all stop before run returns (allowing a moment
// for closed connections to unwind).
func TestRunLeavesNoGoroutines(t *testing.T) {
	dir := t.TempDir()
	sc := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: leak
server:
  embedded: true
  embedded_models:
    simple:
      error_rate: "0.1"
models:
  - name: simple
sweep:
  protocol: [http, grpc]
  concurrency: [1, 4]
measurement:
  window: 100ms
  max_trials: 3
  allow_unstable: true
  max_error_rate: 50%
`)
	before := runtime.NumGoroutine()
	r := runFault(t, context.Background(), "run", sc, "-q", "--out-dir", dir)
	if r.code != exitcode.OK {
		t.Fatalf("want exit 0, got %s", r)
	}
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before the run, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
