package main

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perfscen/perfscen/internal/exitcode"
)

// unsettled is a scenario whose point never settles on the fake clock:
// the delay model stalls 200 ms of every 700 ms, so windows of 500 ms
// disagree by far more than the 10% stability band in every run of six.
const unsettled = `version: 1
name: unsettled
server:
  embedded: true
  embedded_models:
    delay: {delay: 10ms, stall_every: 700ms, stall_for: 200ms}
models:
  - name: delay
    shapes: {INPUT0: [16]}
load:
  concurrency: 1
measurement:
  window: 500ms
  stability: 10%
  trials: 3
  max_trials: 6
baseline:
  path: ./unsettled-baseline.json
`

// busyAllAlong is a runner at load 15 with neighbours on every core: other
// processes use 93% of the CPUs and 3% of wake-ups wait 4 ms.
func busyAllAlong() *busyMachine {
	return newBusyMachine(busySpell{from: 0, to: time.Hour, others: 0.93, load1: 15.2, wait: 0.8, slow: 0.03, slowBy: 4 * time.Millisecond})
}

const tooBusyWords = "the machine was too busy for point delay/c=1 to settle in 6 window(s) (load average 15.2 on "

// A point that cannot settle because the machine is too busy says so, in
// those words, naming the measured contention and suggesting the same-job
// A/B mode, with exit 3: in the summary line, the console, the Markdown,
// HTML and JUnit reports, and where a baseline cannot record the run. On
// a quiet machine the same unstable point keeps its own words.
func TestTooBusyToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := writeFile(t, filepath.Join(dir, "unsettled.yaml"), unsettled)
		md, junit, page := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
		code, stdout, stderr := runMemBusy(t, busyAllAlong(), "run", "-q", file, "--out-dir", dir,
			"--markdown", md, "--junit", junit, "--html", page)
		if code != exitcode.Environment {
			t.Fatalf("exit %d, want 3\n%s%s", code, stdout, stderr)
		}
		summary := lastLine(stdout)
		if !strings.HasPrefix(summary, "COULD NOT MEASURE: 1 of ") || !strings.Contains(summary, "(could not measure: "+tooBusyWords) ||
			!strings.Contains(summary, "other processes used 93% of the CPUs, wake-up delay p99 ") ||
			!strings.Contains(summary, "gate with a same-job A/B comparison instead") {
			t.Errorf("summary line: %s", summary)
		}
		for name, path := range map[string]string{"markdown": md, "junit": junit, "html": page} {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			body := html.UnescapeString(string(b))
			if !strings.Contains(body, tooBusyWords) || !strings.Contains(body, "same-job A/B comparison") {
				t.Errorf("%s report lacks the words:\n%s", name, body)
			}
		}

		// The run cannot enter a history: exit 3, the same words.
		res := filepath.Join(dir, "unsettled.json")
		code, out, errs := runCLI(t, "baseline", "update", "--from", res)
		if code != exitcode.Environment || !strings.Contains(errs, "could not record: "+tooBusyWords) {
			t.Errorf("baseline update --from: exit %d\n%s%s", code, out, errs)
		}
		code, out, errs = runMemBusy(t, busyAllAlong(), "baseline", "calibrate", "--runs", "2", "--record", file)
		if code != exitcode.Environment || !strings.Contains(errs, "could not record: "+tooBusyWords) {
			t.Errorf("baseline calibrate --record: exit %d\n%s%s", code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "unsettled-baseline.json")); err == nil {
			t.Error("a baseline was written")
		}

		// The same point on a quiet machine: unstable, exit 3, its own
		// words.
		code, stdout, stderr = runMemBusy(t, newBusyMachine(), "run", "-q", file, "--out-dir", dir)
		if code != exitcode.Environment || !strings.Contains(stdout, "measurement stable @ delay/c=1 (did not stabilize (6 window(s) measured))") ||
			strings.Contains(stdout, "too busy") {
			t.Errorf("quiet machine: exit %d\n%s%s", code, stdout, stderr)
		}
		code, out, errs = runCLI(t, "baseline", "update", "--from", res)
		if code != exitcode.Invalid || strings.Contains(errs, "too busy") {
			t.Errorf("baseline update --from, quiet machine: exit %d\n%s%s", code, out, errs)
		}
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
