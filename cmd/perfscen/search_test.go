package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/runner/result"
)

// copyScenario copies a scenario of scenarios/ into dir with its baseline
// kept there too, so tests record baselines without touching the tree.
func copyScenario(t *testing.T, name, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(b), "path: ../baselines/", "path: ./baseline-", 1)
	return writeFile(t, filepath.Join(dir, name), body)
}

func searchPoint(t *testing.T, run *result.Run) *result.Point {
	t.Helper()
	for i := range run.Points {
		if run.Points[i].Status == result.PointSearched {
			return &run.Points[i]
		}
	}
	t.Fatalf("no search point in %d points", len(run.Points))
	return nil
}

func probeLevels(s *result.SearchOutcome) string {
	var out []string
	for _, p := range s.Probes {
		out = append(out, fmt.Sprintf("%g:%s", p.Level, p.Outcome))
	}
	return strings.Join(out, " ")
}

// The max-concurrency-under-SLO search on the embedded delay model, on
// the fake clock: one instance at 10 ms a request makes p90 at
// concurrency c exactly c × 10 ms, so the highest c under 48 ms is 4, as
// the model's parameters imply. Recorded as the baseline, it gates the
// next build: made twice as slow (20 ms), the search finds 2, and both
// the threshold and the baseline fail (exit 1).
func TestSearchMaxConcurrencyOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := copyScenario(t, "delay-max-concurrency.yaml", dir)
		code, stdout, stderr := runMem(t, "run", "-q", file, "--out-dir", dir)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		resPath := filepath.Join(dir, "delay-max-concurrency.json")
		run := readResult(t, resPath)
		p := searchPoint(t, run)
		s := p.Searched
		if v, _ := p.Summary.Value("max_concurrency"); v != 4 || !s.Found || s.Failing != 5 ||
			probeLevels(s) != "1:meets 32:aborted 16:fails 8:fails 4:meets 6:fails 5:fails" {
			t.Fatalf("found %v (failing %v), probes %s", v, s.Failing, probeLevels(s))
		}
		for _, want := range []string{
			"Search: max_concurrency@p90<48ms (p90 < 48ms, binary search of concurrency in [1, 32] by 1",
			"  Found: 4: concurrency 4 meets p90 < 48ms (p90 40.00ms, 97% interval [40.00ms, 40.00ms]); 5 does not (fails: p90 50.00ms",
			"│ pass   │ threshold │ max_concurrency@p90<48ms >= 4",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		if code, out, errs := runCLI(t, "baseline", "update", "--from", resPath); code != 0 {
			t.Fatalf("baseline update: exit %d\n%s%s", code, out, errs)
		}

		code, stdout, stderr = runMem(t, "run", "-q", file, "--out-dir", dir, "--model-param", "delay.delay=20ms")
		if code != exitcode.CheckFailed {
			t.Fatalf("slowed model: exit %d, want 1\n%s%s", code, stdout, stderr)
		}
		slow := searchPoint(t, readResult(t, resPath))
		if v, _ := slow.Summary.Value("max_concurrency"); v != 2 {
			t.Errorf("slowed model: found %v, want 2 (20 ms × 2 = 40 ms)", v)
		}
		for _, want := range []string{
			"max_concurrency@p90<48ms >= 4 @ delay/max_concurrency@p90<48ms: max_concurrency is 2",
			"max_concurrency vs baseline @ delay/max_concurrency@p90<48ms: -50.0% vs history of 1 run(s)",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})
}

// A search whose range never meets the bound fails on the data and says
// so; one whose whole range meets it passes, naming the range.
func TestSearchEndsOfTheRange(t *testing.T) {
	tests := []struct {
		set  string
		code int
		want string
	}{
		{"searches[0].while=p90 < 5ms", exitcode.CheckFailed, "no load in [1, 32] meets p90 < 5ms (at 1: p90 10.00ms"},
		{"searches[0].concurrency=1:3", exitcode.OK, "every load in [1, 3] meets p90 < 48ms (concurrency 3: p90 30.00ms"},
	}
	for _, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				file := copyScenario(t, "delay-max-concurrency.yaml", dir)
				code, stdout, stderr := runMem(t, "run", "-q", file, "--out-dir", dir, "--set", tc.set, "--set", `searches[0].threshold=">= 1"`)
				if code != tc.code || !strings.Contains(stdout, tc.want) {
					t.Fatalf("exit %d, want %d; stdout lacks %q\n%s%s", code, tc.code, tc.want, stdout, stderr)
				}
			})
		})
	}
}

// A goodput search and a request-rate search on the same model: with a
// 25 ms SLO every request at concurrency 2 (20 ms) is good and none at 3;
// the model serves 100 requests a second, and a constant rate above that
// queues without end.
func TestGoodputAndRateSearches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: goodput
server:
  embedded: true
  embedded_models: {delay: {delay: 10ms}}
models:
  - name: delay
    shapes: {INPUT0: [16]}
measurement: {window: 500ms, trials: 6, stability: 20%}
searches:
  - concurrency: "1:16"
    while: goodput_share >= 95%
    slo: 25ms
  - request_rate: "20:400:10"
    while: p99 < 30ms
`)
		code, stdout, stderr := runMem(t, "run", "-q", file, "--out-dir", dir)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		run := readResult(t, filepath.Join(dir, "goodput.json"))
		got := map[string]float64{}
		for _, p := range run.Points {
			if p.Searched != nil {
				got[p.ID] = p.Searched.Value
			}
		}
		// Bisecting 20..400 by 10: 20, 400, 210, 115, 67.5, 91.25, 103.125,
		// 97.1875; the bracket [97.1875, 103.125] holds 100/s.
		if got["delay/max_concurrency@goodput_share>=95%"] != 2 || got["delay/max_request_rate@p99<30ms"] != 97.1875 {
			t.Errorf("found %v\n%s", got, stdout)
		}
	})
}

// abort_on stops a sweep at the first hopeless point: the run fails on the
// data there (exit 1) and the points after it are not measured. Notes
// number windows from 1, as progress does ("window 0" before).
func TestAbortOnStopsTheSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := writeFile(t, filepath.Join(dir, "s.yaml"), `version: 1
name: abort
server:
  embedded: true
  embedded_models: {delay: {delay: 10ms}}
models:
  - name: delay
    shapes: {INPUT0: [16]}
sweep: {concurrency: [1, 8, 32, 64]}
measurement: {window: 500ms, trials: 3}
abort_on:
  - p99 > 200ms
`)
		code, stdout, stderr := runMem(t, "run", "-q", file, "--out-dir", dir)
		if code != exitcode.CheckFailed {
			t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
		}
		run := readResult(t, filepath.Join(dir, "abort.json"))
		if len(run.Points) != 3 || run.Points[2].Status != result.PointAborted {
			t.Fatalf("%d points, last %s", len(run.Points), run.Points[len(run.Points)-1].Status)
		}
		for _, want := range []string{
			"aborted at window 1: abort_on `p99 > 200ms`: p99 is 320ms; the run stopped there",
			"Note: stopped early: abort_on `p99 > 200ms`: p99 is 320ms at delay/c=32 (window 1); the points after it were not measured",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
	})
}

// A ramp's stages are points with their own figures: concurrency 1 to 4
// over four windows, then held at 4 (40 ms), then down to 1.
func TestRampStagesOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		code, stdout, stderr := runMem(t, "run", "-q", "@scenarios/delay-ramp.yaml", "--out-dir", dir)
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		run := readResult(t, filepath.Join(dir, "delay-ramp.json"))
		var got []string
		for _, p := range run.Points {
			var p50s []string
			for _, tr := range p.Trials {
				p50s = append(p50s, fmt.Sprintf("%.0f", tr.Metrics.P50Us/1000))
			}
			got = append(got, p.ID+" "+strings.Join(p50s, ","))
		}
		if strings.Join(got, "; ") != "delay/stage=1 10,20,30,40; delay/stage=2 40,40,40,40; delay/stage=3 30,20,10" {
			t.Errorf("stages (p50 ms per window): %v", got)
		}
		if !strings.Contains(stdout, "│ pass   │ threshold │ p50 < 60ms") {
			t.Errorf("no per-stage threshold:\n%s", stdout)
		}
	})
}

// --set is recorded in the result, and a baseline recorded without it
// does not gate a run with it: the run says it is not gated.
func TestSetIsRecordedAndKeptApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		file := copyScenario(t, "delay-max-concurrency.yaml", dir)
		if code, out, errs := runMem(t, "run", "-q", file, "--out-dir", dir); code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		resPath := filepath.Join(dir, "delay-max-concurrency.json")
		if code, out, errs := runCLI(t, "baseline", "update", "--from", resPath); code != 0 {
			t.Fatalf("baseline update: exit %d\n%s%s", code, out, errs)
		}
		code, stdout, stderr := runMem(t, "run", "-q", file, "--out-dir", dir, "--set", "measurement.window=250ms")
		if code != exitcode.OK {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		run := readResult(t, resPath)
		if len(run.Overrides) != 1 || run.Overrides[0] != "measurement.window=250ms" {
			t.Errorf("overrides recorded: %v", run.Overrides)
		}
		if !strings.Contains(stdout, "NOT GATED: testbed "+run.Environment.Testbed+"+set.") {
			t.Errorf("a run with --set was gated against the file's history:\n%s", stdout)
		}
	})
}
