package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Reports written after the verdict never change its exit code: a run
// whose points are all unstable (allowed) or unmeasured gets a CSV of
// what it measured, and writeReports reports no error.
func TestReportsNeverOverturnTheVerdict(t *testing.T) {
	dir := t.TempDir()
	trial := result.Trial{Metrics: result.Metrics{Throughput: 84, Requests: 84, P50Us: 10500}}
	run := &result.Run{Scenario: "q", Status: result.StatusComplete, Points: []result.Point{
		{ID: "simple/c=1", Model: "simple", Mode: plan.LoadConcurrency, Concurrency: 1, Status: result.PointUnstable,
			Summary: trial.Metrics, Trials: []result.Trial{trial, trial}},
		{ID: "simple/c=2", Model: "simple", Mode: plan.LoadConcurrency, Concurrency: 2, Status: result.PointFailed},
	}}
	v := &verdict.Verdict{Checks: []verdict.Check{{Kind: verdict.KindThreshold, Name: "errors == 0", Status: verdict.StatusPass}}}
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	f := reportFlags{format: "console", csv: filepath.Join(dir, "out.csv"), junit: filepath.Join(dir, "j.xml"), markdown: filepath.Join(dir, "s.md")}
	if err := writeReports(e, f, &plan.Plan{Scenario: "q"}, run, v, false); err != nil {
		t.Fatalf("writeReports: %v\nstderr: %s", err, stderr.String())
	}
	b, err := os.ReadFile(f.csv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\n1,84,") || !strings.HasSuffix(string(b), ",unstable\n") {
		t.Errorf("csv lacks the unstable point c=1 with its status:\n%s", b)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// A report on stdout that the run could not write afterwards is refused
// before the load.
func TestStdoutCSVRefusedBeforeLoad(t *testing.T) {
	pl := &plan.Plan{Scenario: "two", Points: []plan.Point{{Model: "a", Coords: map[string]string{}}, {Model: "b", Coords: map[string]string{}}}}
	if err := checkStdoutFormat("csv", pl); err == nil || !strings.Contains(err.Error(), "needs 2 files") {
		t.Errorf("two models on stdout CSV: %v", err)
	}
	if err := checkStdoutFormat("yaml", pl); err == nil {
		t.Error("unknown format accepted")
	}
	if err := checkStdoutFormat("console", pl); err != nil {
		t.Error(err)
	}
}
