package verdict

import (
	"fmt"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Evaluate runs the automatic checks, thresholds, comparisons and the
// baseline gate. base may be nil (no baseline recorded yet): the gate is
// then skipped with a notice saying how to record one.
func (o Options) Evaluate(checks plan.Checks, run *result.Run, base *baseline.File) *Verdict {
	v := &Verdict{Interrupted: run.Status == result.StatusInterrupted, RequireGated: o.RequireGated}
	v.Checks = append(v.Checks, o.Automatic(run)...)
	v.Checks = append(v.Checks, searches(run)...)
	v.Checks = append(v.Checks, Thresholds(checks.Thresholds, run)...)
	v.Checks = append(v.Checks, o.Comparisons(checks.Comparisons, run)...)
	if checks.Baseline == nil {
		return v
	}
	if base == nil {
		target := run.ScenarioPath
		if target == "" {
			target = "SCENARIO.yaml"
		}
		v.Notices = append(v.Notices, fmt.Sprintf(
			"no baseline at %s yet; the run passes without one. Record one with `perfscen baseline update %s` or `perfscen baseline update --from results.json`",
			checks.Baseline.Path, target))
		if checks.Baseline.Required {
			v.Checks = append(v.Checks, Check{Kind: KindBaseline, Key: KeyTestbed, Name: NameNoHistory, Status: StatusFail, Environment: true,
				Message: fmt.Sprintf("NOT GATED: no baseline at %s and baseline.required is set (exit 3)", checks.Baseline.Path)})
		}
		return v
	}
	if base.ScenarioHash != "" && run.ScenarioHash != "" && base.ScenarioHash != run.ScenarioHash {
		v.Notices = append(v.Notices, "the scenario file changed since the baseline was recorded; compare with care or re-record it")
	}
	for _, c := range o.Baseline(checks.Baseline, base, run) {
		if c.Key == KeyTestbed {
			v.Notices = append(v.Notices, c.Message)
			if c.Status == StatusPass {
				continue // where the history came from is a note, not a check
			}
		}
		v.Checks = append(v.Checks, c)
	}
	minRuns := checks.Baseline.MinRuns
	if minRuns <= 0 {
		minRuns = plan.DefaultMinRuns
	}
	v.Checks = append(v.Checks, blind(v.Checks, minRuns)...)
	return v
}
