package scenariorun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/failure"
	"github.com/perfscen/perfscen/internal/report"
	"github.com/perfscen/perfscen/internal/search"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
)

// Run measures p and decides it, as perfscen run does: the baseline is
// read (and refused if bad) before any load; checks are decided while the
// servers are up, inconclusive ones get more trials within the scenario's
// gate budgets; the verdict is recorded in the result (run.Verdict).
//
// The result and the verdict are returned whenever the scenario got as
// far as its servers, a run that never reached one included, together
// with the error that stopped the run. Invalid input (a bad baseline, a
// model the server lacks, bad input data) returns no verdict: nothing was
// decided.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*result.Run, *verdict.Verdict, error) {
	var base *baseline.File
	if p.Checks.Baseline != nil && !opts.NoBaseline {
		var err error
		if base, err = loadBaseline(p); err != nil {
			return nil, nil, err
		}
	}
	checks := p.Checks
	if opts.NoBaseline {
		checks.Baseline = nil
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	seq := newSequential(p, checks, base, VerdictOptions(p), log)
	ctl := search.New(p)
	extend := seq.extend
	if ctl != nil {
		// Checks on a search's figure see what it found.
		extend = func(run *result.Run) ([]string, int) { return seq.extend(ctl.Attach(run)) }
	}
	run, runErr := measure(ctx, p, opts, extend, ctl)
	run = ctl.Attach(run)
	if runErr != nil && failure.KindOf(runErr) == failure.InvalidInput {
		// The scenario or its data is wrong: no verdict to record.
		return run, nil, runErr
	}
	if run == nil {
		run = unmeasured(ctx, p, opts.Version, runErr)
	}
	recordPaths(run, p)
	v := seq.final(run)
	run.Verdict = v.Record(exitcode.ForOutcome(v.Outcome()), report.SummaryLine(v))
	return run, v, runErr
}

// unmeasured is the result of a run that never reached a point: no
// figures, its status and the error that stopped it.
func unmeasured(ctx context.Context, p *plan.Plan, version string, runErr error) *result.Run {
	now := time.Now()
	run := &result.Run{
		SchemaVersion: result.SchemaVersion, Scenario: p.Scenario, ScenarioPath: p.ScenarioPath,
		ScenarioHash: p.ScenarioHash, Source: "perfscen", Started: now, Finished: now,
		Status: result.StatusFailed, Points: []result.Point{}, RunID: result.NewRunID(now), Overrides: p.Overrides,
	}
	run.Environment.PerfscenVersion = version
	if ctx.Err() != nil {
		run.Status = result.StatusInterrupted
	}
	if runErr != nil {
		run.Errors = []string{runErr.Error()}
	}
	return run
}

// recordPaths notes in the result where its scenario and baseline files
// are, as absolute paths, so `baseline update --from` finds the baseline
// this run was gated against from any working directory.
func recordPaths(run *result.Run, p *plan.Plan) {
	if p.ScenarioPath != "" {
		if abs, err := filepath.Abs(p.ScenarioPath); err == nil {
			run.ScenarioFile = abs
		}
	}
	if p.Checks.Baseline != nil && p.Checks.Baseline.Path != "" {
		if abs, err := filepath.Abs(p.Checks.Baseline.Path); err == nil {
			run.BaselinePath = abs
		}
	}
}

// VerdictOptions are the verdict settings a plan asks for.
func VerdictOptions(p *plan.Plan) verdict.Options {
	o := verdict.Options{AllowUnstable: p.Measurement.AllowUnstable, MaxErrorRate: p.Measurement.MaxErrorRate,
		RequireGated: p.Checks.Gate.RequireGated}
	for _, m := range p.Models {
		if m.MaxErrorRate != nil {
			if o.ModelMaxErrorRate == nil {
				o.ModelMaxErrorRate = map[string]float64{}
			}
			o.ModelMaxErrorRate[m.Alias] = *m.MaxErrorRate
		}
	}
	return o
}

// loadBaseline reads the scenario's baseline; a missing file is not an
// error (the run passes with a notice), a bad one is exit 2.
func loadBaseline(p *plan.Plan) (*baseline.File, error) {
	b, err := baseline.Load(p.Checks.Baseline.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := b.CheckScenario(p.Scenario); err != nil {
		return nil, failure.Invalid(fmt.Errorf("%s: %w", p.Checks.Baseline.Path, err))
	}
	return b, nil
}
