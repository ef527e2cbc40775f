package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
)

// updateScenario is a one-point embedded-server scenario that records
// into NAME.json beside it; THRESHOLD is its one threshold.
const updateScenario = `version: 1
name: NAME
server:
  SERVER
  timeout: 5s
models:
  - name: simple
load:
  mode: concurrency
sweep:
  concurrency: "1:1:1"
measurement:
  window: 200ms
  stability: 900%
  max_trials: 3
  trials: 3
thresholds:
  - THRESHOLD
baseline:
  path: NAME.json
  metrics: [throughput]
`

func writeUpdateScenario(t *testing.T, dir, name, server, threshold string) string {
	t.Helper()
	body := strings.NewReplacer("NAME", name, "SERVER", server, "THRESHOLD", threshold).Replace(updateScenario)
	return writeScenario(t, dir, name+".yaml", body)
}

// baseline update over several scenarios goes on past each one that
// cannot be recorded (a server that refuses, an invalid file, a failed
// threshold), writes the ones that can, says which is which and why, and
// exits with the worst code by run's ranking: 1 > 2 > 3 > 4 > 0.
func TestBaselineUpdateManyGoesOn(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		code  int
		rows  []string
	}{
		// The unreachable server comes first: the others still run.
		{"down first", []string{"down", "bad", "good"}, 2, []string{
			`down.yaml +skipped +3 +server at 127.0.0.1:9 .*refused every connection`,
			`bad.yaml +skipped +2 +.*bad.yaml:1:1: server: missing`,
			`good.yaml +written +0 +DIR/good.json`,
			`Baselines: 1 written, 2 skipped`,
			`exit 2: an invalid scenario`,
		}},
		{"a failed threshold outranks the rest", []string{"down", "slow", "good"}, 1, []string{
			`down.yaml +skipped +3 `,
			`slow.yaml +skipped +1 +.*not recording a failing run`,
			`good.yaml +written +0 `,
			`exit 1: a scenario failed a check`,
		}},
		{"could not measure alone", []string{"good", "down"}, 3, []string{
			`good.yaml +written +0 `,
			`down.yaml +skipped +3 `,
			`exit 3: a scenario could not be measured`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { updateMany(t, c.files, c.code, c.rows) })
		})
	}
}

func updateMany(t *testing.T, names []string, want int, rows []string) {
	dir := t.TempDir()
	down := writeUpdateScenario(t, dir, "down", "url: 127.0.0.1:9", "throughput >= 1/s")
	bad := writeScenario(t, dir, "bad.yaml", "version: 1\nname: bad\nmodels: [{name: simple}]\nload: {mode: sideways}\n")
	good := writeUpdateScenario(t, dir, "good", "embedded: true\n  embedded_models: {simple: {added_latency: 5ms}}", "throughput >= 1/s")
	slow := writeUpdateScenario(t, dir, "slow", "embedded: true\n  embedded_models: {simple: {added_latency: 5ms}}", "throughput >= 1000000000/s")

	byName := map[string]string{"down": down, "bad": bad, "good": good, "slow": slow}
	var files []string
	for _, n := range names {
		files = append(files, byName[n])
	}
	code, stdout, stderr := runMem(t, append([]string{"baseline", "update", "--replace"}, files...)...)
	if code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	for _, row := range rows {
		row = strings.ReplaceAll(row, "DIR", regexp.QuoteMeta(dir))
		if !regexp.MustCompile(`(?m)` + row).MatchString(stdout) {
			t.Errorf("stdout lacks a line matching %q\n%s", row, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "good.json")); err != nil {
		t.Errorf("good.json not written: %v", err)
	}
	for _, f := range files {
		if f != good && !strings.Contains(stderr, "perfscen: "+f+":") {
			t.Errorf("stderr does not give %s's error in full\n%s", f, stderr)
		}
	}
}

// --baseline names one file: with several scenarios it is refused before
// anything is measured.
func TestBaselineUpdateManyOneBaselineFlag(t *testing.T) {
	dir := t.TempDir()
	a := writeUpdateScenario(t, dir, "a", "embedded: true\n  embedded_models: {simple: {added_latency: 5ms}}", "throughput >= 1/s")
	b := writeUpdateScenario(t, dir, "b", "embedded: true\n  embedded_models: {simple: {added_latency: 5ms}}", "throughput >= 1/s")
	code, stdout, stderr := runCLI(t, "baseline", "update", "--baseline", filepath.Join(dir, "x.json"), a, b)
	if code != 2 || !strings.Contains(stderr, "--baseline names one file") || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 naming --baseline before any run", code, stdout, stderr)
	}
}
