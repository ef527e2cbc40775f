package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/busy"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/internal/scenariorun"
	"github.com/perfscen/perfscen/internal/verdict"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

// freshRun loads a scenario and measures it once, with no baseline gate:
// the run is what a baseline is made of. It refuses runs whose thresholds
// or comparisons fail unless force is set: a baseline must not enshrine a
// broken build.
func freshRun(e *env, file string, force bool, testbed string) (*plan.Plan, *result.Run, error) {
	pl, err := scenario.LoadPlan(file, e.getenv)
	if err != nil {
		return nil, nil, exitcode.AsInvalid(err)
	}
	run, err := measure(e, pl, reportFlags{testbed: testbed})
	if err != nil {
		return pl, run, err
	}
	checks := pl.Checks
	checks.Baseline = nil
	v := scenariorun.VerdictOptions(pl).Evaluate(checks, run, nil)
	if failed := v.Failed(); len(failed) > 0 && !force {
		names := make([]string, 0, len(failed))
		for _, c := range failed {
			names = append(names, c.Name+" @ "+c.Point)
		}
		if v.Outcome() == verdict.OutcomeNotMeasured {
			// Nothing failed on the data: the run could not be
			// measured (exit 3), and a busy machine is named as such.
			return pl, run, exitcode.With(exitcode.Environment, fmt.Errorf("%s: %s", file, notMeasuredText(run, failed, names)))
		}
		return pl, run, exitcode.With(exitcode.CheckFailed, fmt.Errorf("%s: not recording a failing run (%d failed: %v); use --force to record it anyway", file, len(failed), names))
	}
	return pl, run, nil
}

// notMeasuredText says why a run that could not be measured is not
// recorded: in the words every report uses when a point could not settle
// because the machine was too busy, else the checks that could not
// measure.
func notMeasuredText(run *result.Run, failed []verdict.Check, names []string) string {
	for i := range run.Points {
		p := &run.Points[i]
		if s, ok := busy.Unsettled(p, run.Environment.NumCPU); ok && p.Search == "" {
			return busy.NotRecorded(p.ID, s, run.Environment.NumCPU)
		}
	}
	msg := fmt.Sprintf("could not record: the run could not be measured (%d failed: %v)", len(failed), names)
	if failed[0].Message != "" {
		msg += ": " + failed[0].Message
	}
	return msg + "; use --force to record it anyway"
}

// baselinePathFor is the scenario's baseline file: its baseline section's
// path, else baselines/<name>.json.
func baselinePathFor(pl *plan.Plan) string {
	if pl.Checks.Baseline != nil && pl.Checks.Baseline.Path != "" {
		return pl.Checks.Baseline.Path
	}
	return filepath.Join("baselines", pl.Scenario+".json")
}

// baselineUpdateScenarios runs and records each scenario. With several,
// one that cannot be run or recorded is skipped, not the end: the others
// are still measured and written, a closing table says what was written
// and what was skipped and why, and the exit code is the worst of them
// by the ranking perfscen run uses (1 > 2 > 3 > 4 > 0).
func baselineUpdateScenarios(e *env, args []string, f baselineUpdateFlags, keepSet bool) error {
	files, err := expandScenarioArgs(args)
	if err != nil {
		return err
	}
	if len(files) > 1 && f.path != "" {
		return exitcode.AsInvalid(fmt.Errorf("--baseline names one file, and %d scenarios were given: each scenario records into its own baseline.path", len(files)))
	}
	if len(files) == 1 {
		_, err := baselineUpdateOne(e, files[0], f, keepSet)
		return err
	}
	worst := exitcode.OK
	var rows []updateRow
	for i, file := range files {
		if e.ctx.Err() != nil {
			fmt.Fprintf(e.stderr, "perfscen: interrupted; not run: %s\n", strings.Join(files[i:], ", "))
			worst = worse(worst, exitcode.Environment)
			for _, f := range files[i:] {
				rows = append(rows, updateRow{scenario: f, code: exitcode.Environment, what: "not run: interrupted"})
			}
			break
		}
		fmt.Fprintf(e.stdout, "== %s\n", file)
		path, err := baselineUpdateOne(e, file, f, keepSet)
		row := updateRow{scenario: file, code: exitcode.Of(err), what: path}
		if err != nil {
			// The error in full, naming the scenario once.
			msg := err.Error()
			if !strings.HasPrefix(msg, file+":") {
				msg = file + ": " + msg
			}
			fmt.Fprintf(e.stderr, "perfscen: %s\n", msg)
			row.what = headLine(err.Error())
		}
		worst = worse(worst, row.code)
		rows = append(rows, row)
	}
	printUpdateRollup(e.stdout, rows, worst)
	return exitSilently(worst)
}

// baselineUpdateOne measures one scenario and records the run, returning
// the baseline file written.
func baselineUpdateOne(e *env, file string, f baselineUpdateFlags, keepSet bool) (string, error) {
	pl, run, err := freshRun(e, file, f.opts.Force, f.testbed)
	if err != nil {
		return "", err
	}
	f.opts.AllowUnstable = pl.Measurement.AllowUnstable
	if f.path == "" {
		f.path = baselinePathFor(pl)
	}
	if !keepSet && pl.Checks.Baseline != nil && pl.Checks.Baseline.Keep > 0 {
		f.opts.Keep = pl.Checks.Baseline.Keep
	}
	return f.path, baselineUpdateFrom(e, run, f)
}

// updateRow is one scenario's line in the closing table of a baseline
// update over several scenarios: the file written, or why it was skipped.
type updateRow struct {
	scenario string
	code     int
	what     string
}

func printUpdateRollup(w io.Writer, rows []updateRow, worst int) {
	written := 0
	width := len("scenario")
	for _, r := range rows {
		width = max(width, len(r.scenario))
		if r.code == exitcode.OK {
			written++
		}
	}
	fmt.Fprintf(w, "\nBaselines: %d written, %d skipped\n%-*s  %-7s  %-4s  %s\n", written, len(rows)-written, width, "scenario", "outcome", "exit", "baseline written, or why not")
	for _, r := range rows {
		outcome := "written"
		if r.code != exitcode.OK {
			outcome = "skipped"
		}
		fmt.Fprintf(w, "%-*s  %-7s  %-4d  %s\n", width, r.scenario, outcome, r.code, r.what)
	}
	fmt.Fprintf(w, "exit %d: %s\n", worst, updateMeaning(worst))
}

func updateMeaning(code int) string {
	switch code {
	case exitcode.OK:
		return "every baseline written"
	case exitcode.CheckFailed:
		return "a scenario failed a check on measured data and was not recorded"
	case exitcode.Invalid:
		return "an invalid scenario, run or baseline was not recorded"
	case exitcode.Environment:
		return "a scenario could not be measured or its baseline written"
	}
	return exitMeaning(code)
}

// headLine is s up to its first newline: one row of a table.
func headLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func newBaselineCalibrateCmd(e *env) *cobra.Command {
	var runs int
	var record bool
	var f baselineUpdateFlags
	cmd := &cobra.Command{
		Use:   "calibrate --runs K SCENARIO",
		Short: "Run a scenario K times to measure job-to-job noise and the smallest detectable change",
		Long: `Run the scenario K independent times (each with its own server start when
embedded, its own connections and warm-up), then print per point and metric
the trial CV, the job-to-job SD of run medians and the minimum detectable
effect (MDE) of the history gate. With --record every run is appended to the
baseline history, which calibrates the gate at once (K >= min_runs).`,
		Example: `  perfscen baseline calibrate --runs 5 scenarios/engine-comparison.yaml
  perfscen baseline calibrate --runs 5 --record scenarios/quickstart.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runs < 2 {
				return exitcode.AsInvalid(errors.New("--runs must be at least 2 to estimate noise"))
			}
			var pl *plan.Plan
			var all []*result.Run
			for i := 0; i < runs; i++ {
				fmt.Fprintf(e.stderr, "calibration run %d of %d\n", i+1, runs)
				p, run, err := freshRun(e, args[0], f.opts.Force, f.testbed)
				if err != nil {
					return err
				}
				pl = p
				all = append(all, run)
			}
			printNoise(e.stdout, baseline.Calibrate(all))
			if !record {
				return nil
			}
			if f.path == "" {
				f.path = baselinePathFor(pl)
			}
			f.opts.AllowUnstable = pl.Measurement.AllowUnstable
			if pl.Checks.Baseline != nil && pl.Checks.Baseline.Keep > 0 && !cmd.Flags().Changed("keep") {
				f.opts.Keep = pl.Checks.Baseline.Keep
			}
			for i, run := range all {
				ff := f
				ff.opts.Replace = f.opts.Replace && i == 0
				if err := baselineUpdateFrom(e, run, ff); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 5, "independent runs")
	cmd.Flags().BoolVar(&record, "record", false, "append every run to the baseline history")
	cmd.Flags().StringVar(&f.path, "baseline", "", "baseline file (default: the scenario's baseline path)")
	cmd.Flags().BoolVar(&f.opts.Replace, "replace", false, "with --record: start a new history")
	cmd.Flags().BoolVar(&f.opts.Force, "force", false, "use runs with failed checks or unstable points")
	cmd.Flags().IntVar(&f.opts.Keep, "keep", plan.DefaultKeep, "history runs to keep per testbed")
	cmd.Flags().StringVar(&f.testbed, "testbed", "", "testbed to record under (default: $PERFSCEN_TESTBED, the scenario's baseline.testbed, else derived)")
	return cmd
}

// printNoise renders a calibration: one row per point and metric.
func printNoise(w io.Writer, n baseline.Noise) {
	tw := tablewriter.NewWriter(w)
	tw.Header("point", "metric", "runs", "trials", "center", "trial CV", "job SD", "MDE")
	points := make([]string, 0, len(n))
	for p := range n {
		points = append(points, p)
	}
	sort.Strings(points)
	for _, p := range points {
		metrics := make([]string, 0, len(n[p]))
		for m := range n[p] {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		for _, m := range metrics {
			est := n[p][m]
			_ = tw.Append(p, m, fmt.Sprint(est.Runs), fmt.Sprint(est.Trials), baseline.FormatValue(m, est.Center),
				numfmt.Pct(est.TrialCV), numfmt.Pct(est.JobSD), numfmt.HistoryMDE(est.MDE))
		}
	}
	_ = tw.Render()
	fmt.Fprintln(w, "\n"+mdeNote)
}

// mdeNote explains the MDE column of the noise tables: what the figure
// is, and why some say "over 100% (uncalibrated)".
const mdeNote = "mde: smallest change the history gate detects with 80% probability at 0.99 confidence;\n" +
	"     over 100% (uncalibrated): too few runs, or too noisy, to detect even a doubling or a halving (the gate cannot fail on that metric yet)"
