package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestStepSummaryAppends(t *testing.T) {
	run, v := fixture(t)
	path := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(path, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := env(map[string]string{"GITHUB_STEP_SUMMARY": path})
	if err := StepSummary(getenv, run, v); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile("testdata/summary.golden.md")
	if string(b) != "earlier step\n"+string(want) {
		t.Errorf("summary file:\n%s", b)
	}
	if err := StepSummary(env(nil), run, v); err != nil {
		t.Errorf("without GITHUB_STEP_SUMMARY: %v", err)
	}
}

func TestStepSummaryFitsLimit(t *testing.T) {
	md := bytes.Repeat([]byte("| row | row |\n"), StepSummaryLimit/10)
	got := fitSummary(md, StepSummaryLimit)
	if len(got) > StepSummaryLimit {
		t.Fatalf("%d bytes > limit", len(got))
	}
	if !bytes.HasSuffix(got, []byte("see the JSON or HTML report._\n")) {
		t.Error("no truncation note")
	}
	if small := []byte("ok\n"); !bytes.Equal(fitSummary(small, 100), small) {
		t.Error("small summary changed")
	}
}

func TestAnnotateOnlyInActions(t *testing.T) {
	run, v := fixture(t)
	var b bytes.Buffer
	if err := Annotate(&b, env(nil), run, v); err != nil || b.Len() != 0 {
		t.Errorf("outside Actions wrote %q (err %v)", b.String(), err)
	}
	if err := Annotate(&b, env(map[string]string{"GITHUB_ACTIONS": "true"}), run, v); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), "::error "); got != 3 {
		t.Errorf("%d error annotations, want 3:\n%s", got, b.String())
	}
}

func TestAnnotationEscapingAndCap(t *testing.T) {
	var checks []verdict.Check
	for i := 0; i < 12; i++ {
		checks = append(checks, verdict.Check{Kind: verdict.KindThreshold, Name: "p95 < 3ms, always", Point: "a/c=1", Status: verdict.StatusFail, Message: "50% over\nlimit", Value: 4760, Bound: 3000, Op: "<", Unit: "us"})
	}
	run, _ := fixture(t)
	var b bytes.Buffer
	if err := GitHub(&b, run, &verdict.Verdict{Checks: checks}, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != maxAnnotations+1 || !strings.HasPrefix(lines[len(lines)-1], "::notice ") {
		t.Errorf("want %d errors and a notice, got:\n%s", maxAnnotations, b.String())
	}
	want := "::error file=scenarios/resnet50.yaml,title=perfscen threshold%3A p95 < 3ms%2C always @ a/c=1::50%25 over%0Alimit (value 4.76ms, required < 3.00ms)"
	if lines[0] != want {
		t.Errorf("annotation\n got %s\nwant %s", lines[0], want)
	}
}

func TestColorFor(t *testing.T) {
	if ColorFor(&bytes.Buffer{}, env(nil)) {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ColorFor(f, env(nil)) {
		t.Error("a file is not a terminal")
	}
}

func TestSummaryLine(t *testing.T) {
	pass := verdict.Check{Status: verdict.StatusPass, Name: "a"}
	warn := verdict.Check{Status: verdict.StatusWarn, Name: "w"}
	skip := verdict.Check{Status: verdict.StatusSkip, Name: "s"}
	fail := func(n, p string) verdict.Check {
		return verdict.Check{Status: verdict.StatusFail, Name: n, Point: p}
	}
	many := &verdict.Verdict{}
	for i := 0; i < 12; i++ {
		many.Checks = append(many.Checks, fail("x", "p"))
	}
	tests := []struct {
		v    *verdict.Verdict
		want string
	}{
		{nil, "PASS: no checks defined"},
		{&verdict.Verdict{Checks: []verdict.Check{pass}}, "PASS: 1 check passed"},
		{&verdict.Verdict{Checks: []verdict.Check{pass, pass, warn, skip}}, "PASS: 3 checks passed (1 warning, 1 skipped)"},
		{&verdict.Verdict{Checks: []verdict.Check{pass, {Status: verdict.StatusPass, Name: "b", Warnings: []string{"x", "y"}}}}, "PASS: 2 checks passed (2 warnings)"},
		{&verdict.Verdict{Checks: []verdict.Check{pass, fail("p95 < 30ms", "onnx/c=10"), fail("optimized/reference throughput >= 1.15", "c=2")}},
			"FAIL: 2 of 3 checks failed: p95 < 30ms @ onnx/c=10; optimized/reference throughput >= 1.15 @ c=2"},
		{many, "FAIL: 12 of 12 checks failed: " + strings.Repeat("x @ p; ", 10) + "and 2 more"},
	}
	for _, tt := range tests {
		if got := SummaryLine(tt.v); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestDisturbanceLine(t *testing.T) {
	run := &result.Run{Points: []result.Point{{Trials: []result.Trial{
		{Disturbance: &result.Disturbance{OtherCPU: 0.1, Steal: 0.01, Load1: 2.5}},
		{Disturbance: &result.Disturbance{OtherCPU: 0.3, Load1: 3}},
		{Disturbance: &result.Disturbance{OtherCPU: 0.2}},
		{},
	}}}}
	want := "Machine during the trials: other processes used 20% of the CPUs (median; 10–30%), steal ≤1%, load average ≤3.0"
	if got := DisturbanceLine(run); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// With schedstat and PSI: perfscen's own run-queue wait and the
	// machine's CPU pressure, from the trials that recorded them.
	run.Points[0].Trials[0].Disturbance.RunQueueWait = new(0.25)
	run.Points[0].Trials[1].Disturbance.RunQueueWait = new(1.5)
	run.Points[0].Trials[1].Disturbance.CPUPressure = new(0.6)
	want += "; perfscen's threads waited 150% (median; 25–150%) of their CPU time in the run queue; CPU pressure 60% (median; 60–60%) of the time"
	if got := DisturbanceLine(run); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := DisturbanceLine(&result.Run{}); got != "" {
		t.Errorf("nothing recorded: %q", got)
	}
}
