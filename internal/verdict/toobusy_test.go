package verdict

import (
	"strings"
	"testing"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// busyWindows gives p windows measured while other processes used share
// of the CPUs and perfscen's threads waited wait times as long as they ran.
func busyWindows(p result.Point, share, wait float64) result.Point {
	for range 5 {
		w := wait
		p.Windows = append(p.Windows, result.Window{Disturbance: &result.Disturbance{OtherCPU: share, Load1: 19, RunQueueWait: &w}})
	}
	return p
}

// A threshold on a wall-clock figure that fails where the machine was too
// busy to measure on is could not measure (exit 3), not a failure of the
// server; on a quiet machine it fails, and figures a busy machine does
// not move fail wherever they fail. The case of `make gate` on an
// unchanged tree at load 16–26: throughput >= 10/s at 9.0 infer/s, other
// processes at 96% of the CPUs, perfscen's threads waiting 21 times as
// long as they ran.
func TestThresholdOnATooBusyMachine(t *testing.T) {
	tests := []struct {
		name      string
		th        plan.Threshold
		share     float64
		env       bool
		inMessage string
	}{
		{"throughput, too busy", plan.Threshold{Metric: "throughput", Op: ">=", Value: 10}, 0.96, true, "the machine was too busy for a wall-clock figure"},
		{"p50, too busy", plan.Threshold{Metric: "p50", Op: "<", Value: 1000}, 0.96, true, "other processes used 96% of the CPUs"},
		{"throughput, quiet", plan.Threshold{Metric: "throughput", Op: ">=", Value: 10}, 0.05, false, "throughput is 9.0 infer/s"},
		{"errors, too busy", plan.Threshold{Metric: "errors", Op: "==", Value: 0}, 0.96, false, "errors is"},
		{"server CPU, too busy", plan.Threshold{Metric: "server_cpu_infer", Op: "<", Value: 100}, 0.96, false, "server_cpu_infer is"},
		{"p50 far beyond what the machine explains", plan.Threshold{Metric: "p50", Op: "<", Value: 1}, 0.96, false, "p50 is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mkPoint("generate/c=4", "generate", c(4), constant(5, 9, 20000))
			for i := range p.Trials {
				p.Trials[i].Metrics.Errors = 2
				p.Trials[i].Metrics.Process = &result.ProcessStats{CPUUs: 300, Inferences: 40}
			}
			p.Summary.Errors = 10
			p.Summary.Process = &result.ProcessStats{CPUUs: 300, Inferences: 200}
			p = busyWindows(p, tt.share, 21)
			run := mkRun(p)
			run.Environment.NumCPU = 2
			got := Thresholds([]plan.Threshold{tt.th}, run)
			if len(got) != 1 {
				t.Fatalf("%d checks", len(got))
			}
			g := got[0]
			if g.Status != StatusFail || g.Environment != tt.env || !strings.Contains(g.Message, tt.inMessage) {
				t.Errorf("got %s (environment %v) %q; want a failure, environment %v, containing %q", g.Status, g.Environment, g.Message, tt.env, tt.inMessage)
			}
		})
	}
}

// A baseline check judged by a tolerance band (a history of one run, too
// short for an interval) that fails on a machine too busy to measure on,
// by no more than the machine could stretch the figure, is could not
// measure (exit 3): the GitLab job's +599% p50 on an unchanged tree at
// load 17. On a quiet machine, or with a calibrated history, it fails.
func TestToleranceBandOnATooBusyMachine(t *testing.T) {
	for _, tt := range []struct {
		name  string
		share float64
		env   bool
	}{
		{"too busy", 0.96, true},
		{"quiet", 0.05, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := baseline.New("demo")
			old := mkRun(mkPoint("simple/c=1", "simple", c(1), constant(5, 200, 4400)))
			if _, err := baseline.Update(f, old, baseline.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			p := busyWindows(mkPoint("simple/c=1", "simple", c(1), constant(5, 30, 31000)), tt.share, 6)
			run := mkRun(p)
			run.Environment.NumCPU = 2
			got := Options{}.Baseline(&plan.Baseline{Path: "b.json", Metrics: []string{"p50"}}, f, run)
			ch := find(got, "p50")
			if ch == nil || ch.Method != "tolerance" || ch.Status != StatusFail || ch.Environment != tt.env || tt.env && ch.Class != ClassUndecided {
				t.Fatalf("want a failed tolerance check, environment %v:\n%s", tt.env, describe(got))
			}
			if o := (&Verdict{Checks: got}).Outcome(); tt.env && o != OutcomeNotMeasured || !tt.env && o != OutcomeFail {
				t.Errorf("outcome %s:\n%s", o, describe(got))
			}
		})
	}
}
