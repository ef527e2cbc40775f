package verdict

import (
	"testing"

	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

func TestThresholds(t *testing.T) {
	run := mkRun(
		mkPoint("a/c=1", "a", c(1), constant(10, 1000, 20000)),
		mkPoint("a/c=4", "a", c(4), constant(10, 3000, 40000)),
		mkPoint("b/c=1", "b", c(1), constant(10, 500, 10000)),
	)
	type want struct {
		point  string
		status Status
	}
	tests := []struct {
		name string
		th   plan.Threshold
		want []want
	}{
		{"all points pass", plan.Threshold{Metric: "p95", Op: "<", Value: 50000},
			[]want{{"a/c=1", StatusPass}, {"a/c=4", StatusPass}, {"b/c=1", StatusPass}}},
		{"one point fails", plan.Threshold{Metric: "p95", Op: "<", Value: 30000},
			[]want{{"a/c=1", StatusPass}, {"a/c=4", StatusFail}, {"b/c=1", StatusPass}}},
		{"model selector", plan.Threshold{Metric: "throughput", Op: ">=", Value: 800, Selector: plan.Selector{Models: []string{"a"}}},
			[]want{{"a/c=1", StatusPass}, {"a/c=4", StatusPass}}},
		{"coordinate selector", plan.Threshold{Metric: "throughput", Op: ">", Value: 2000, Selector: plan.Selector{At: map[string][]string{"concurrency": {"1"}}}},
			[]want{{"a/c=1", StatusFail}, {"b/c=1", StatusFail}}},
		{"no data fails", plan.Threshold{Metric: "server_queue", Op: "<", Value: 10, Selector: plan.Selector{Models: []string{"b"}}},
			[]want{{"b/c=1", StatusFail}}},
		{"selector matches nothing", plan.Threshold{Metric: "p95", Op: "<", Value: 1, Selector: plan.Selector{Models: []string{"zzz"}}},
			[]want{{"", StatusFail}}},
		{"equality", plan.Threshold{Metric: "throughput", Op: "==", Value: 500, Selector: plan.Selector{Models: []string{"b"}}},
			[]want{{"b/c=1", StatusPass}}},
		{"unknown operator", plan.Threshold{Metric: "throughput", Op: "~", Value: 500, Selector: plan.Selector{Models: []string{"b"}}},
			[]want{{"b/c=1", StatusFail}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Thresholds([]plan.Threshold{tt.th}, run)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d checks, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				if got[i].Point != w.point || got[i].Status != w.status {
					t.Errorf("check %d: got %s %s (%s), want %s %s", i, got[i].Point, got[i].Status, got[i].Message, w.point, w.status)
				}
				if got[i].Kind != KindThreshold {
					t.Errorf("kind %s", got[i].Kind)
				}
			}
		})
	}
}

func TestAutomatic(t *testing.T) {
	unstable := mkPoint("a/c=1", "a", c(1), constant(3, 1000, 20000))
	unstable.Status = result.PointUnstable
	bad := mkPoint("a/c=2", "a", c(2), constant(10, 1000, 20000))
	bad.Validation = result.Validation{Enabled: true, Checked: 50, Mismatches: 2, First: []string{"output0[3]: got 1, want 2"}}
	good := mkPoint("a/c=3", "a", c(3), constant(10, 1000, 20000))
	good.Validation = result.Validation{Enabled: true, Checked: 50}

	tests := []struct {
		name          string
		points        []result.Point
		allowUnstable bool
		wantFailed    bool
		wantEnv       bool
		wantKinds     map[Kind]Status
	}{
		{"unstable is an environment failure", []result.Point{unstable, good}, false, true, true,
			map[Kind]Status{KindStability: StatusFail, KindValidation: StatusPass}},
		{"allow_unstable warns", []result.Point{unstable}, true, false, false,
			map[Kind]Status{KindStability: StatusWarn}},
		{"validation mismatch is a check failure", []result.Point{unstable, bad}, false, true, false,
			map[Kind]Status{KindStability: StatusFail, KindValidation: StatusFail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &Verdict{Checks: Options{AllowUnstable: tt.allowUnstable}.Automatic(mkRun(tt.points...))}
			got := map[Kind]Status{}
			for _, c := range v.Checks {
				got[c.Kind] = c.Status
			}
			for k, s := range tt.wantKinds {
				if got[k] != s {
					t.Errorf("%s: got %s, want %s", k, got[k], s)
				}
			}
			if failed := len(v.Failed()) > 0; failed != tt.wantFailed || v.EnvironmentFailure() != tt.wantEnv {
				t.Errorf("failed %v env %v, want %v %v", failed, v.EnvironmentFailure(), tt.wantFailed, tt.wantEnv)
			}
		})
	}
}

func TestAutomaticRunErrors(t *testing.T) {
	run := mkRun(mkPoint("a/c=1", "a", c(1), constant(10, 1000, 20000)))
	run.Status = result.StatusPartial
	run.Errors = []string{"server unreachable"}
	v := &Verdict{Checks: Options{AllowUnstable: false}.Automatic(run)}
	if len(v.Failed()) != 1 || !v.EnvironmentFailure() {
		t.Fatalf("want one environment failure, got %+v", v.Checks)
	}
}
