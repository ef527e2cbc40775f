package report

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/result"
)

// Problem 5: a check that compared nothing prints no value, bound or
// effect (no "0.0 infer/s >= 0.0 infer/s +0.0%"), and a baseline that
// supports no bound says so instead of printing one.
func TestCheckRowsShowOnlyFigures(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		c                    verdict.Check
		value, bound, effect string
	}{
		{"unstable point", verdict.Check{Kind: verdict.KindBaseline, Metric: "throughput", Unit: "infer/s", Op: ">=",
			Status: verdict.StatusWarn, Class: verdict.ClassUnstable, NoValue: true, NRef: 3}, "", "", ""},
		{"threshold at a failed point", verdict.Check{Kind: verdict.KindThreshold, Metric: "p99", Unit: "us", Op: "<", Bound: 100000,
			Status: verdict.StatusSkip, NoValue: true}, "", "", ""},
		{"uncalibrated throughput", verdict.Check{Kind: verdict.KindBaseline, Metric: "throughput", Unit: "infer/s", Op: ">=", Value: 881,
			Effect: -0.27, Method: "tolerance", Status: verdict.StatusWarn, Uncalibrated: true}, "881.0 infer/s", "none (uncalibrated)", "-27.0%"},
		{"uncalibrated prediction interval", verdict.Check{Kind: verdict.KindBaseline, Metric: "throughput", Unit: "infer/s", Op: ">=", Value: 338, Bound: 9.6,
			Effect: 0.777, Lo: -0.762, Hi: 12.247, Method: "prediction-interval", MDE: 14, Status: verdict.StatusPass, Uncalibrated: true}, "338.0 infer/s", ">= 9.6 infer/s", "+77.7%"},
		{"gated", verdict.Check{Kind: verdict.KindBaseline, Metric: "throughput", Unit: "infer/s", Op: ">=", Value: 881, Bound: 845.2,
			Effect: -0.01, Method: "prediction-interval", Status: verdict.StatusPass}, "881.0 infer/s", ">= 845.2 infer/s", "-1.0%"},
	} {
		r := rowOf(tc.c)
		if r.Value != tc.value || r.Bound != tc.bound || r.Effect != tc.effect {
			t.Errorf("%s: value %q bound %q effect %q; want %q %q %q", tc.name, r.Value, r.Bound, r.Effect, tc.value, tc.bound, tc.effect)
		}
		if tc.c.Uncalibrated && (!strings.Contains(r.MDE, "uncalibrated") || r.Interval != "") {
			t.Errorf("%s: MDE %q, interval %q", tc.name, r.MDE, r.Interval)
		}
	}
}

// The summary's warning count is the number of warning lines the console
// and the Markdown summary list, and of ::warning annotations for checks
// that are not undecided.
func TestWarningCountMatchesLines(t *testing.T) {
	withWarnings := verdict.Check{Kind: verdict.KindBaseline, Name: "p95 vs baseline", Point: "m/c=1", Status: verdict.StatusPass,
		Message: "+1.0% vs history of 7 run(s)", Warnings: []string{"point did not stabilize", "uncalibrated baseline", "beyond the limit"}}
	warn := verdict.Check{Kind: verdict.KindStability, Name: "measurement stable", Point: "m/c=1", Status: verdict.StatusWarn,
		Message: "did not stabilize (16 window(s) measured); allowed by allow_unstable"}
	bare := verdict.Check{Kind: verdict.KindErrors, Name: "errors", Point: "m/c=2", Status: verdict.StatusWarn}
	v := &verdict.Verdict{Checks: []verdict.Check{withWarnings, warn, bare, {Name: "ok", Status: verdict.StatusPass}}}
	if got, want := SummaryLine(v), "PASS: 4 checks passed (5 warnings)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	run := &result.Run{Scenario: "s", Status: result.StatusComplete}
	var con, md, gh strings.Builder
	if err := Console(&con, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := GitHub(&gh, run, v, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{
		"console":  strings.Count(con.String(), "  warning: "),
		"markdown": strings.Count(md.String(), "\n  - warning"),
		"github":   strings.Count(gh.String(), "::warning "),
	} {
		if n != 5 {
			t.Errorf("%s lists %d warnings, the summary says 5:\n%s%s%s", name, n, con.String(), md.String(), gh.String())
		}
	}
}
