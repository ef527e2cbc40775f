package report

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/verdict"
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

