package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfscen/perfscen/runner/result"
)

// slowdownRuns writes ten result files of scenario demo: six runs at the
// usual speed started on days 1–6, then four runs 45% slower (p50 ×1.45,
// throughput ÷1.45) started on days 7–10, each with a small wobble. It
// returns their paths in the order the runs started.
func slowdownRuns(t *testing.T, dir string) []string {
	t.Helper()
	wobble := []float64{0, 0.01, -0.01, 0.005, -0.005, 0.008, -0.008, 0.003, -0.003, 0.006}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var paths []string
	for i := range 10 {
		run, err := result.ReadFile("testdata/verdicts/history0.json")
		if err != nil {
			t.Fatal(err)
		}
		slow := 1.0
		if i >= 6 {
			slow = 1.45
		}
		f := slow * (1 + wobble[i])
		run.RunID = fmt.Sprintf("run%02d", i+1)
		run.Started = t0.Add(time.Duration(i) * 24 * time.Hour)
		run.Finished = run.Started.Add(time.Minute)
		for j := range run.Points {
			p := &run.Points[j]
			scale := func(m *result.Metrics) {
				m.Throughput /= f
				m.P50Us *= f
				m.P90Us *= f
				m.P95Us *= f
				m.P99Us *= f
				m.LatencyAvgUs *= f
			}
			scale(&p.Summary)
			for k := range p.Trials {
				scale(&p.Trials[k].Metrics)
			}
		}
		path := filepath.Join(dir, run.RunID+".json")
		if err := result.WriteFile(path, run); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// The history report is in the order the runs started, whatever order
// they were recorded in: normal runs recorded after four runs 45% slower
// (results gathered from several CI jobs) still show the slowdown as a
// slowdown, at the first slow run, and the report is the one recording
// them as they ran gives.
func TestBaselineHistoryInStartOrder(t *testing.T) {
	dir := t.TempDir()
	runs := slowdownRuns(t, dir)
	orders := map[string][]string{
		"as they ran": runs,
		"slow first":  append(append([]string{}, runs[6:]...), runs[:6]...),
	}
	reports := map[string]string{}
	for name, order := range orders {
		base := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		for _, r := range order {
			if code, _, stderr := runCLI(t, "baseline", "update", "--from", r, "--baseline", base); code != 0 {
				t.Fatalf("%s: recording %s: exit %d: %s", name, r, code, stderr)
			}
		}
		code, stdout, stderr := runCLI(t, "baseline", "history", base, "--metric", "throughput", "--metric", "p50")
		if code != 0 {
			t.Fatalf("%s: history: exit %d: %s", name, code, stderr)
		}
		reports[name] = stdout
	}
	if reports["as they ran"] != reports["slow first"] {
		t.Errorf("recording order changed the report:\n--- as they ran\n%s\n--- slow first\n%s", reports["as they ran"], reports["slow first"])
	}
	got := reports["slow first"]
	for _, want := range []string{
		"| 7 | 2026-03-07 09:00 | run07 | dev | 720.2 infer/s |  | **-30.9%** from here, worse |",
		"| 7 | 2026-03-07 09:00 | run07 | dev | 17.64ms |  | **+44.7%** from here, worse |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks the slowdown at run 7: %q", want)
		}
	}
	if strings.Contains(got, "better") {
		t.Errorf("a slowdown reported as an improvement:\n%s", got)
	}
	golden(t, filepath.Join("testdata", "history-start-order.golden"), got)
}
