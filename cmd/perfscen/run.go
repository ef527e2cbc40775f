package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfscen/perfscen/internal/exitcode"
	"github.com/perfscen/perfscen/internal/shm"
	"github.com/perfscen/perfscen/runner"
)

func init() { register(newRunCmd) }

// reportFlags are the file outputs a run can write besides the console.
type reportFlags struct {
	outDir     string
	out        string
	junit      string
	html       string
	csv        string
	csvVerbose bool
	markdown   string
	format     string
	quiet      bool
	progress   string
	noBaseline bool
	// connectTimeout bounds the wait for the server to become ready.
	connectTimeout time.Duration
	// modelParams override embedded-server model parameters (model.key=value).
	modelParams []string
	// testbed names the testbed (--testbed).
	testbed string
	// fleet: --agents N makes this run the coordinator of N agents.
	fleet fleetFlags
	// set are --set path=value overrides laid over each scenario file.
	set []string
	// requireGated makes checks that were not gated exit 4 (--require-gated).
	requireGated bool
}

func newRunCmd(e *env) *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "run FILE|DIR...",
		Short: "Run scenarios, print the report and gate on thresholds, comparisons and baselines",
		Long: `Run each scenario (a DIR means every *.yaml in it): start the embedded server
if asked, measure every sweep point as perf_analyzer does, keep the trials,
evaluate thresholds, same-run comparisons and the baseline, print the report
and write the results.

Exit codes: 0 pass · 1 a check failed on measured data · 2 invalid scenario,
data, baseline or flags · 3 could not measure (server unreachable, a point
where no request succeeded, unstable, interrupted) · 4 inconclusive. With
several scenarios: 1 if any failed on data, else 2, else 3, else 4, else 0.

With --agents N the load comes from N agents (perfscen agent) that dial
this process: it plans, shards each point's load among them, starts every
session on one clock and merges their windows' histograms and counters;
stability, checks, the baseline and the report are decided once, here.
See docs/distributed.md.`,
		Example: `  perfscen run scenarios/quickstart.yaml
  perfscen run scenarios/ --junit out/junit.xml --html out/report.html
  perfscen run scenarios/engine-comparison.yaml --out results.json --csv pa.csv
  perfscen run scenarios/engine-comparison.yaml --model-param mlp_optimized.slowdown=4   # a slower build: exit 1
  PERFSCEN_AGENT_TOKEN=… perfscen run --agents 3 --listen 0.0.0.0:7700 load.yaml   # coordinate 3 perfscen agents
  perfscen run scenarios/quickstart.yaml --set measurement.window=500ms --set 'sweep.concurrency=[1, 2]'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkProgressMode(f.progress); err != nil {
				return err
			}
			removeStaleShm(e)
			files, err := expandScenarioArgs(args)
			if err != nil {
				return err
			}
			// Preflight: what would fail after the load fails before it.
			if err := duplicateNames(files, e.getenv); err != nil {
				return err
			}
			if err := checkOutputs(f); err != nil {
				return err
			}
			if f.fleet.agents > 0 && len(files) != 1 {
				return usageError(cmd, fmt.Errorf("--agents runs one scenario; got %d", len(files)))
			}
			debug := e.getenv("PERFSCEN_DEBUG_GOROUTINES") != ""
			start := runtime.NumGoroutine()
			if debug {
				fmt.Fprintf(e.stderr, "perfscen: goroutines at start: %d\n", start)
			}
			worst := exitcode.OK
			var rows []rollup
			for i, file := range files {
				if e.ctx.Err() != nil {
					// Interrupted: the scenarios not yet started are not run.
					fmt.Fprintf(e.stderr, "perfscen: interrupted; not run: %s\n", strings.Join(files[i:], ", "))
					worst = worse(worst, exitcode.Environment)
					for _, f := range files[i:] {
						rows = append(rows, rollup{scenario: f, outcome: "not run", code: exitcode.Environment, deciding: "interrupted"})
					}
					break
				}
				code, row := runOne(e, file, f, len(files) > 1)
				worst = worse(worst, code)
				rows = append(rows, row)
			}
			if len(files) > 1 {
				// The last lines of a run over several scenarios say how
				// each ended: on stdout with the console report, else on
				// stderr so a JSON or CSV stdout stays parseable.
				out := e.stderr
				if f.format == "console" {
					out = e.stdout
				}
				printRollup(out, rows, worst)
			}
			if debug {
				fmt.Fprintf(e.stderr, "perfscen: goroutines at end: %d\n", settledGoroutines(start))
			}
			return exitSilently(worst)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.outDir, "out-dir", "out", "directory for result JSON files (<scenario>.json)")
	fl.StringVarP(&f.out, "out", "o", "", "write the result JSON here instead of --out-dir")
	fl.StringVar(&f.junit, "junit", "", "write a JUnit XML report")
	fl.StringVar(&f.html, "html", "", "write a self-contained HTML report with plots")
	fl.StringVar(&f.csv, "csv", "", "write perf_analyzer's -f CSV; several models or swept dimensions give one file each (PATH.<model>[.<dim>=<value>].csv)")
	fl.BoolVar(&f.csvVerbose, "verbose-csv", false, "with --csv: perf_analyzer's --verbose-csv columns")
	fl.StringVar(&f.markdown, "markdown", "", "write a Markdown summary")
	fl.StringVar(&f.format, "format", "console", "report on stdout: console, json, markdown, csv")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output (as --progress never) and no \"results written\" lines")
	fl.StringVar(&f.progress, "progress", progressAuto, "progress on stderr: auto (a line rewritten in place on a terminal; elsewhere, as in CI, a line per point and a window line at most every 10s), always (a line for every window), never")
	fl.BoolVar(&f.noBaseline, "no-baseline", false, "skip the baseline gate")
	fl.BoolVar(&f.requireGated, "require-gated", false, "exit 4 when a check could not detect the change it exists for (testbed noise hides it): as gate.require_gated")
	fl.StringVar(&f.testbed, "testbed", "", "testbed the baseline history is kept under (default: $PERFSCEN_TESTBED, the scenario's baseline.testbed, else derived from CPU, memory, GPU and server)")
	fl.DurationVar(&f.connectTimeout, "connect-timeout", 0, fmt.Sprintf("how long to wait for the server to answer ready before exit 3 (default %s; a server that refuses every connection from the start is given up after %s unless this is set)", runner.DefaultConnectTimeout, runner.RefusedGrace))
	fl.StringArrayVar(&f.modelParams, "model-param", nil, "embedded server only: override a model parameter, model.key=value (repeatable), e.g. mlp_optimized.slowdown=4")
	f.fleet.register(fl)
	fl.StringArrayVar(&f.set, "set", nil, "override a scenario setting without editing the file, path=value (YAML value; repeatable), e.g. measurement.window=500ms or server.url=host:8001; checked like the file and recorded in the result, and a baseline keeps such runs apart")
	return cmd
}

// settledGoroutines gives goroutines that are already on their way out
// (closed connections, stopped servers) a moment to exit before counting.
func settledGoroutines(target int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > target && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// worse combines the exit codes of several scenarios (or of one scenario's
// verdict and its outputs) by what CI must hear first: a failure
// demonstrated by data (1) is never hidden; then an invalid scenario,
// data or command line (2), which no retry fixes; then could not measure
// (3); then inconclusive (4); then pass (0).
func worse(a, b int) int {
	rank := map[int]int{exitcode.OK: 0, exitcode.Inconclusive: 1, exitcode.Environment: 2, exitcode.Invalid: 3, exitcode.CheckFailed: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// expandScenarioArgs turns FILE|DIR arguments into scenario files.
func expandScenarioArgs(args []string) ([]string, error) {
	files, err := scenarioFiles(args)
	return files, exitcode.AsInvalid(err)
}

// outputPath names a per-scenario output: with several scenarios, the
// scenario name goes before the extension so files don't overwrite.
func outputPath(path, scenario string, many bool) string {
	if path == "" || !many {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + scenario + ext
}

// removeStaleShm deletes shared-memory objects left in /dev/shm by perfscen
// processes that no longer run (a run killed with SIGKILL cannot unlink
// its regions, and nothing else ever would). Objects of live processes,
// and anything not named by perfscen, are left alone. A failure here is
// reported but does not stop the run.
func removeStaleShm(e *env) {
	removed, err := shm.CleanupStale(shm.Prefix)
	for _, n := range removed {
		fmt.Fprintf(e.stderr, "perfscen: removed stale shared memory %s/%s (its process has exited)\n", shm.Dir, n)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perfscen: warning: %v\n", err)
	}
}
