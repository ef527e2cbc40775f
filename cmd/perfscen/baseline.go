package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/baseline"
	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/numfmt"
	"github.com/perfscen/perfscen/runner/plan"
	"github.com/perfscen/perfscen/runner/result"
	"github.com/perfscen/perfscen/scenario"
)

func init() { register(newBaselineCmd) }

func newBaselineCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Show or update recorded baselines",
	}
	cmd.AddCommand(newBaselineShowCmd(e), newBaselineUpdateCmd(e), newBaselineCalibrateCmd(e), newBaselineHistoryCmd(e))
	return cmd
}

func newBaselineShowCmd(e *env) *cobra.Command {
	var metrics []string
	var all bool
	cmd := &cobra.Command{
		Use: "show FILE",
		Example: `  perfscen baseline show baselines/quickstart.json
  perfscen baseline show baselines/llm-quickstart.json --metric tpot_p50 --metric ttft_p99
  perfscen baseline show baselines/llm-quickstart.json --all`,
		Short: "Print a baseline's history, noise and detectable change per metric",
		Long: `Print a baseline's history, noise and detectable change per metric. The
table lists throughput, p50, p95 and p99 and, for LLM points, ttft_p50,
tpot_p50, output_tokens_per_s and goodput; --metric names the metrics to
list instead (as a scenario's baseline.metrics does) and --all lists every
metric the history holds.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			want, err := shownMetrics(metrics, all)
			if err != nil {
				return err
			}
			f, err := baseline.Load(args[0])
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			return showBaseline(e.stdout, f, want)
		},
	}
	cmd.Flags().StringArrayVar(&metrics, "metric", nil, "list this metric (repeatable; default: throughput, p50, p95, p99 and the LLM headline figures)")
	cmd.Flags().BoolVar(&all, "all", false, "list every metric the history holds")
	return cmd
}

// shownMetrics is what --metric and --all select for baseline show and
// baseline history: the default list, every metric (nil), or the named
// ones, each checked (exit 2).
func shownMetrics(metrics []string, all bool) ([]string, error) {
	switch {
	case all && len(metrics) > 0:
		return nil, exitcode.AsInvalid(fmt.Errorf("--all and --metric: choose one"))
	case all:
		return nil, nil
	case len(metrics) > 0:
		for _, m := range metrics {
			if _, ok := plan.LookupMetric(m); !ok {
				return nil, exitcode.AsInvalid(fmt.Errorf("--metric %q: not a metric (known: %s)", m, strings.Join(plan.MetricNames(), ", ")))
			}
		}
		return metrics, nil
	}
	return baseline.ShowMetrics, nil
}

// baselineUpdateFlags are shared with the scenario-running form of
// "baseline update" wired by the run command.
type baselineUpdateFlags struct {
	from, path string
	// testbed files the run under this name (--testbed).
	testbed string
	opts    baseline.UpdateOptions
}

func newBaselineUpdateCmd(e *env) *cobra.Command {
	var f baselineUpdateFlags
	cmd := &cobra.Command{
		Use:   "update [SCENARIO|DIR...] | --from results.json",
		Short: "Add a run to the baseline history (prints the change, then writes atomically)",
		Long: `Record a run in the scenario's baseline history: either run each scenario
afresh (the baseline path, keep and gated metrics come from its baseline
section) or take an existing result file with --from, which goes to the
baseline its run was gated against, from any working directory (the
result records both paths; a result from another machine falls back to
its scenario path from here), or to --baseline. A run whose recorded verdict is
not a pass (failed, inconclusive, could not measure, interrupted) or that
has failed or partial points is refused unless --force; unstable points are
recorded, marked unstable, from a run that passed with them (allow_unstable),
else refused too (exit 2; exit 3, "could not record: the machine was too
busy for point X to settle (…)", naming the contention, when a point did
not settle because the machine was too busy; run afresh, a run that could
not be measured is refused with exit 3 too); a run already in the history
(same run id) is always refused. The diff is printed before the file is
written, under a lock, atomically.`,
		Example: `  perfscen baseline update scenarios/quickstart.yaml
  perfscen baseline update --from out/quickstart.json
  perfscen baseline update --testbed ci-gpu-a10 --from out/quickstart.json
  perfscen baseline update --replace scenarios/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if f.from != "" {
					return exitcode.AsInvalid(errors.New("give scenarios or --from, not both"))
				}
				return baselineUpdateScenarios(e, args, f, cmd.Flags().Changed("keep"))
			}
			if f.from == "" {
				return exitcode.AsInvalid(errors.New("give scenarios to run or the run to record with --from results.json"))
			}
			run, err := result.ReadFile(f.from)
			if err != nil {
				return exitcode.AsInvalid(err)
			}
			if f.path == "" {
				if f.path, err = scenarioBaselinePath(e, run, f.from); err != nil {
					return err
				}
			}
			return baselineUpdateFrom(e, run, f)
		},
	}
	cmd.Flags().StringVar(&f.from, "from", "", "result file to record")
	cmd.Flags().StringVar(&f.path, "baseline", "", "baseline file (default: the scenario's baseline.path)")
	cmd.Flags().BoolVar(&f.opts.Replace, "replace", false, "drop the testbed's history and keep only this run")
	cmd.Flags().BoolVar(&f.opts.Force, "force", false, "record a run with failed, unstable or partial points")
	cmd.Flags().IntVar(&f.opts.Keep, "keep", plan.DefaultKeep, "history runs to keep per testbed")
	cmd.Flags().StringVar(&f.testbed, "testbed", "", "testbed to record under (default: $PERFSCEN_TESTBED, the scenario's baseline.testbed, else derived; with --from: the run's own testbed)")
	return cmd
}

// scenarioBaselinePath finds where a result file's run belongs: the
// baseline.path of the scenario it was run from, resolved as run resolves
// it. Without a readable scenario with a baseline section there is no
// right answer to guess, so --baseline is required.
//
// The run recorded the absolute paths of its scenario and baseline: while
// that scenario file still exists (the same checkout), the baseline it was
// gated against is the answer, whatever the working directory. A result
// from elsewhere (a CI artifact) falls back to the scenario path as given,
// from the working directory.
func scenarioBaselinePath(e *env, run *result.Run, from string) (string, error) {
	if run.ScenarioFile != "" {
		if st, err := os.Stat(run.ScenarioFile); err == nil && st.Mode().IsRegular() {
			if run.BaselinePath != "" {
				return run.BaselinePath, nil
			}
			return "", exitcode.AsInvalid(fmt.Errorf("scenario %s had no baseline section when %s was run; give the baseline file with --baseline", run.ScenarioFile, from))
		}
	}
	if run.ScenarioPath == "" {
		return "", exitcode.AsInvalid(fmt.Errorf("%s names no scenario file; give the baseline file with --baseline", from))
	}
	pl, err := scenario.LoadPlan(run.ScenarioPath, e.getenv)
	if err != nil {
		return "", exitcode.AsInvalid(fmt.Errorf("%s was run from %s, which cannot be read now (%v); give the baseline file with --baseline", from, run.ScenarioPath, err))
	}
	if pl.Checks.Baseline == nil || pl.Checks.Baseline.Path == "" {
		return "", exitcode.AsInvalid(fmt.Errorf("scenario %s has no baseline section; give the baseline file with --baseline", run.ScenarioPath))
	}
	return pl.Checks.Baseline.Path, nil
}

// baselineUpdateFrom records run under the baseline lock, printing the
// diff before the file is written.
func baselineUpdateFrom(e *env, run *result.Run, f baselineUpdateFlags) error {
	path := f.path
	if path == "" {
		path = filepath.Join("baselines", run.Scenario+".json")
	}
	if f.testbed != "" && f.testbed != run.Environment.Testbed {
		if err := plan.CheckTestbedName(f.testbed); err != nil {
			return exitcode.AsInvalid(fmt.Errorf("--testbed: %w", err))
		}
		run.Environment.Testbed, run.Environment.TestbedSource = f.testbed, "flag"
	}
	_, err := baseline.UpdateFile(path, run, f.opts, func(d *baseline.Diff) error {
		_, err := io.WriteString(e.stdout, d.String())
		return err
	})
	if err != nil {
		if exitcode.Of(err) == exitcode.Environment {
			return err
		}
		return exitcode.AsInvalid(err)
	}
	fmt.Fprintf(e.stdout, "baseline written to %s\n", path)
	return nil
}

// showBaseline prints, per testbed, the history and a noise table of the
// metrics in want (every one the history holds when want is empty).
func showBaseline(w io.Writer, f *baseline.File, want []string) error {
	fmt.Fprintf(w, "scenario %s (format %d)\n", f.Scenario, f.FormatVersion)
	fmt.Fprintf(w, "testbeds: %d\n", len(f.Testbeds))
	for _, id := range f.TestbedIDs() {
		tb := f.Testbeds[id]
		first, last := "", ""
		if n := len(tb.Runs); n > 0 {
			last, first = tb.Runs[0].Recorded.UTC().Format(time.RFC3339), tb.Runs[n-1].Recorded.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %-24s %3d run(s), first recorded %s, last recorded %s\n", id, len(tb.Runs), orNA(first), orNA(last))
	}
	for _, id := range f.TestbedIDs() {
		tb := f.Testbeds[id]
		env := tb.Environment
		fmt.Fprintf(w, "\ntestbed %s: cpu %s ×%d, memory %s, gpu %s, %s; last host %s; %d run(s)\n",
			id, orNA(env.CPU), env.NumCPU, gib(env.MemoryGiB), gpuText(env), serversText(env), orNA(env.Host), len(tb.Runs))
		if env.CPUID != "" {
			fmt.Fprintf(w, "  cpu identity: %s\n", env.CPUID)
		}
		for i, r := range tb.Runs {
			fmt.Fprintf(w, "  %2d  recorded %s  started %s  %s  %d point(s)\n", i+1,
				r.Recorded.UTC().Format(time.RFC3339), r.Started.UTC().Format(time.RFC3339), r.Source, len(r.Points))
		}
		t := tablewriter.NewWriter(w)
		t.Header("point", "metric", "center", "runs", "trials", "trial cv", "job sd", "mde")
		for _, pid := range tb.PointIDs() {
			for _, m := range tb.Noise.Metrics(pid, want) {
				est := tb.Noise[pid][m]
				if err := t.Append(pid, m, baseline.FormatValue(m, est.Center), est.Runs, est.Trials,
					numfmt.Pct(est.TrialCV), numfmt.Pct(est.JobSD), numfmt.HistoryMDE(est.MDE)); err != nil {
					return err
				}
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\n"+mdeNote)
	return nil
}

func gib(n int) string {
	if n <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d GiB", n)
}

func gpuText(env result.Environment) string {
	switch {
	case env.GPUModel != "":
		return fmt.Sprintf("%d× %s", env.GPUCount, env.GPUModel)
	case env.GPUCount > 0:
		return fmt.Sprintf("%d", env.GPUCount)
	}
	return orNA(env.GPU)
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// serversText names the server a testbed was recorded against, or with
// several servers each one by its scenario key.
func serversText(env result.Environment) string {
	if len(env.Servers) == 0 {
		return "server " + strings.TrimSpace(orNA(env.Server.Name)+" "+env.Server.Version)
	}
	parts := make([]string, len(env.Servers))
	for i, s := range env.Servers {
		parts[i] = s.Key + "=" + strings.TrimSpace(orNA(s.Name)+" "+s.Version)
	}
	return "servers " + strings.Join(parts, ", ")
}
