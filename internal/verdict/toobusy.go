package verdict

import (
	"fmt"

	busypkg "github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// tooBusy turns a threshold on a wall-clock figure that failed at a point
// measured on a machine too busy to measure on (busypkg.TooBusy over the
// point's windows) into could-not-measure (exit 3): there the figure is
// the machine's as much as the server's, and perfscen's own threads
// waited for a CPU instead of sending. An absolute bound has no baseline
// run to share the machine's state with, so nothing can say how much of
// the shortfall is the build's. Measured why: `make gate` on an unchanged
// tree at load 16–26 failed grpc-quickstart's `throughput >= 10/s` at 9.0
// infer/s while perfscen's threads waited 21 times as long as they ran.
// Figures a busy machine does not move (errors, the server's CPU time and
// work per inference, instructions, token counts) and the run-queue delay,
// which is the contention itself, keep their failure.
func tooBusy(c *Check, p *result.Point, numCPU int) {
	if !wallClock(c.Metric) {
		return
	}
	s, ok := busypkg.Windows(p)
	if !ok || !s.TooBusy(numCPU) {
		return
	}
	// How far the machine could have stretched a wall-clock figure: as
	// far as perfscen's own threads were, which waited s.Wait times as
	// long as they ran (else by the share of the CPUs left to them). A
	// miss beyond that stretch is the build's, busy machine or not.
	stretch := 1 / (1 - min(s.Others, 0.95))
	if s.HaveWait {
		stretch = 1 + s.Wait
	}
	mi, _ := plan.LookupMetric(c.Metric)
	undone := c.Value / stretch
	if mi.HigherBetter {
		undone = c.Value * stretch
	}
	if holds, err := plan.Compare(undone, c.Op, c.Bound); err != nil || !holds {
		return
	}
	c.Environment = true
	c.Message = fmt.Sprintf("could not measure: %s, but the machine was too busy for a wall-clock figure to say anything about the server (%s: it could stretch the figure %s×, past the bound); rerun on a quieter runner, or gate the build against its base revision in the same job (ci/README.md, \"Same-job A/B\")",
		c.Message, s.Text(numCPU), numfmt.Decimal(stretch, 1))
}

// wallClock says whether a busy machine stretches metric: latencies,
// throughputs and the server's own times, but not its CPU time, its
// run-queue delay, counts or fractions.
func wallClock(metric string) bool {
	mi, ok := plan.LookupMetric(metric)
	if !ok || plan.IsSearchMetric(metric) || metric == plan.MetricServerCPU || metric == plan.MetricServerRunQ || metric == plan.MetricServerPreempt {
		return false
	}
	switch mi.Unit {
	case "us", "infer/s", "tokens/s", "req/s":
		return true
	}
	return false
}

// tooBusyBand applies tooBusy to a baseline check judged by a tolerance
// band (a history shorter than min_runs): one or two earlier runs give no
// interval, only a band around them, which is an absolute bound as much
// as a threshold's. Measured why: the CI template's GitLab job, on an
// unchanged tree at load 17, failed p50 vs baseline at +599% against a
// one-run history (both runs unstable, trials 87% apart) while perfscen's
// threads waited 6 times as long as they ran.
func tooBusyBand(c *Check, run *result.Run) {
	if c.Kind != KindBaseline || c.Method != "tolerance" || c.Status != StatusFail || c.Environment {
		return
	}
	for i := range run.Points {
		if run.Points[i].ID == c.Point {
			if tooBusy(c, &run.Points[i], run.Environment.NumCPU); c.Environment {
				c.Class = ClassUndecided // not measured, so no regression shown
			}
			return
		}
	}
}
